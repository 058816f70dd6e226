"""Factories of the learning area. Organizations come from the parent unless given."""

import factory

from learn.models import Activity, Course, Enrollment, Module
from tests.factories import OrganizationFactory


class CourseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Course

    org = factory.SubFactory(OrganizationFactory)
    title = factory.Sequence(lambda n: f"Course {n}")
    published = True


class ModuleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Module

    course = factory.SubFactory(CourseFactory)
    org = factory.SelfAttribute("course.org")
    seq = factory.Sequence(lambda n: n + 1)
    title = factory.Sequence(lambda n: f"Module {n}")
    published = True


class ActivityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Activity

    module = factory.SubFactory(ModuleFactory)
    course = factory.SelfAttribute("module.course")
    org = factory.SelfAttribute("module.org")
    seq = factory.Sequence(lambda n: n + 1)
    title = factory.Sequence(lambda n: f"Activity {n}")
    settings = None
    published = True


class EnrollmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Enrollment

    course = factory.SubFactory(CourseFactory)
    org = factory.SelfAttribute("course.org")
    membership = None

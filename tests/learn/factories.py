"""Factories of the learning area. Organizations come from the parent unless given."""

import factory

from learn.models import Activity, Course, Enrollment, Module
from tests.factories import OrgScopedFactory


class CourseFactory(OrgScopedFactory):
    class Meta:
        model = Course

    title = factory.Sequence(lambda n: f"Course {n}")
    published = True


class PartFactory(factory.django.DjangoModelFactory):
    """A published part of a course, at the next position."""

    class Meta:
        abstract = True

    seq = factory.Sequence(lambda n: n + 1)
    published = True


class ModuleFactory(PartFactory):
    class Meta:
        model = Module

    course = factory.SubFactory(CourseFactory)
    org = factory.SelfAttribute("course.org")
    title = factory.Sequence(lambda n: f"Module {n}")


class ActivityFactory(PartFactory):
    class Meta:
        model = Activity

    module = factory.SubFactory(ModuleFactory)
    course = factory.SelfAttribute("module.course")
    org = factory.SelfAttribute("module.org")
    title = factory.Sequence(lambda n: f"Activity {n}")
    settings = None


class EnrollmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Enrollment

    course = factory.SubFactory(CourseFactory)
    org = factory.SelfAttribute("course.org")
    membership = None

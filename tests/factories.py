"""Factories of identity and tenancy. Each app's tests keep their own in tests/<app>/."""

import factory

from organizations.models import Membership, Organization, User


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Organization {n}")


class OrgScopedFactory(factory.django.DjangoModelFactory):
    """A tenant-owned record, in an organization of its own unless one is given."""

    class Meta:
        abstract = True

    org = factory.SubFactory(OrganizationFactory)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    first_name = "Pat"
    last_name = factory.Sequence(lambda n: f"Person{n}")
    password = factory.django.Password(None)


class MembershipFactory(OrgScopedFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    role = Membership.Role.LEARNER

import factory

from automations.models import Automation
from tests.factories import OrganizationFactory


def welcome_email(**changes) -> dict:
    data = {"to": "learner", "subject": "Welcome!", "body": "Glad to have you."}
    return {"type": "send_email", "input": {**data, **changes}}


class AutomationFactory(factory.django.DjangoModelFactory):
    """A valid automation (saved as is; the registry's validation has its own tests)."""

    class Meta:
        model = Automation

    org = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Automation {n}")
    description = "Greets new learners."
    trigger = "enrollment.created"
    actions = factory.LazyFunction(lambda: [welcome_email()])
    enabled = True

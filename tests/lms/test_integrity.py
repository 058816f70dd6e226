"""``lms.db.integrity.UniqueRefusal`` tells the refusal of a model's unique constraint from
any other ``IntegrityError``, on this run's database, from the database's own error."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from automations.models import Automation
from downloads.models import DownloadAsset
from lms.db.integrity import UniqueRefusal
from tests.automations.factories import AutomationFactory

pytestmark = pytest.mark.django_db


def _refusal(write) -> IntegrityError:
    with pytest.raises(IntegrityError) as raised, transaction.atomic():
        write()
    return raised.value


def test_the_named_constraint_is_told_from_any_other_refusal(org):
    taken = AutomationFactory(org=org, name="Welcome")
    clash = _refusal(lambda: AutomationFactory(org=org, name="Welcome"))
    not_null = _refusal(lambda: Automation.objects.filter(org=org, id=taken.id).update(name=None))
    is_name_clash = UniqueRefusal(Automation, ["automation_org_name_unique"])
    assert is_name_clash(clash)
    assert not is_name_clash(not_null)
    assert not UniqueRefusal(DownloadAsset)(clash)  # another model's constraints


def test_a_constraint_the_model_does_not_have_is_refused_when_made():
    with pytest.raises(ValueError, match="automation_org_nickname_unique"):
        UniqueRefusal(Automation, ["automation_org_nickname_unique"])

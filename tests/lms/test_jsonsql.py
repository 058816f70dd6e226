"""``lms.db.jsonsql.ListAllows`` answers the same on PostgreSQL and SQLite: true where the JSON
object has no such key, or where its list under the key holds the value, exactly."""

from __future__ import annotations

import pytest

from automations.models import Automation
from lms.db.jsonsql import ListAllows
from tests.automations.factories import AutomationFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("b", {"none", "ab", "b"}),
        ("a", {"none", "ab"}),
        ("c", {"none"}),
        ("", {"none"}),
        ('b"', {"none"}),
        ("%", {"none", "odd"}),
        ("x' OR '1'='1", {"none"}),
    ],
)
def test_a_missing_key_allows_everything_and_a_list_only_its_items(org, value, expected):
    conditions = {
        "none": {},
        "other key": {"activityIds": ["a", "b"]},
        "ab": {"courseIds": ["a", "b"]},
        "b": {"courseIds": ["b"]},
        "odd": {"courseIds": ["%", "a b"]},
    }
    for name, value_of in conditions.items():
        AutomationFactory(org=org, name=name, conditions=value_of)
    found = set(
        Automation.objects.for_org(org)
        .filter(ListAllows("conditions", "courseIds", value))
        .values_list("name", flat=True)
    )
    assert found == expected | {"other key"}

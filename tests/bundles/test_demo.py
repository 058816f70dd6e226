"""seed_demo's bundles: 40 distinct names per organization, idempotent."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from bundles.models import Bundle
from tests.bundles.conftest import URL

pytestmark = pytest.mark.django_db


def seed() -> dict:
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def test_each_organization_gets_forty_distinct_bundles_once():
    seed()
    manifest = seed()
    for key in ("org", "otherOrg"):
        assert manifest[key]["bundles"] == 40
        names = list(
            Bundle.all_orgs.filter(org_id=manifest[key]["id"]).values_list("name", flat=True)
        )
        assert len(names) == len(set(names)) == 40


def test_demo_names_exercise_search(api):
    manifest = seed()
    token = manifest["org"]["tokens"]["learner"]
    found = api.get(URL, token=token, query={"search": "python"}).json()
    names = [row["name"] for row in found["rows"]]
    assert found["total"] >= 3
    assert {"Python", "python", "PYTHON"} <= {
        word for name in names for word in name.split() if word.lower() == "python"
    }
    for wildcard in ("%", "_"):
        body = api.get(URL, token=token, query={"search": wildcard}).json()
        assert body["total"] >= 1
        assert all(wildcard in row["name"] for row in body["rows"])

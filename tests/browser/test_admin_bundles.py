"""Staff create a bundle in a real browser, grouping a course of their organization, and the
API lists it for the organization's members (and only for them)."""

from __future__ import annotations

from bundles.models import Bundle
from organizations.models import Membership
from tests.factories import OrganizationFactory
from tests.helpers import make_member
from tests.learn.factories import CourseFactory


def test_owner_creates_a_bundle_that_members_find_through_the_api(admin_as, make_staff, live_api):
    org = OrganizationFactory(name="Acme Learning")
    other = OrganizationFactory(name="Other Org")
    staff = make_staff(org, Membership.Role.OWNER)
    learner = make_member(org, Membership.Role.LEARNER)
    outsider = make_member(other, Membership.Role.OWNER)
    CourseFactory(org=org, title="Python basics")
    CourseFactory(org=other, title="Python for rivals")

    ui = admin_as(staff.user)
    ui.open_add("bundles", "bundle")
    assert ui.select_options("org") == ["Acme Learning"]
    ui.fill({"org": "Acme Learning", "name": "Python Starter Pack 100%", "description": "Go."})
    row = ui.add_inline_row("bundlecourse_set")
    assert ui.autocomplete_results(f"bundlecourse_set-{row}-course", "Python") == ["Python basics"]
    ui.choose_autocomplete(f"bundlecourse_set-{row}-course", "Python", "Python basics")
    ui.save_added()

    bundle = Bundle.all_orgs.get(name="Python Starter Pack 100%")
    assert [course.title for course in bundle.courses.all()] == ["Python basics"]

    found = live_api.get("/api/bundles?search=100%25", token=learner.token)
    assert found.status == 200, found.body
    body = found.json()
    assert body["total"] == 1 and body["page"] == 1 and body["pageSize"] == 20
    assert [(row["id"], row["name"], row["orgId"]) for row in body["rows"]] == [
        (str(bundle.id), "Python Starter Pack 100%", str(org.id))
    ]
    elsewhere = live_api.get("/api/bundles?search=100%25", token=outsider.token)
    assert elsewhere.json()["total"] == 0

"""The tenancy guard: every API route that takes an id, and every id a body carries, answers
another organization's record exactly like a missing one. A new route or a new tenant-owned
model fails here until it is given a case (or a reason why it has none)."""

import re
import uuid

import pytest
from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver

from learn.models import Enrollment
from lms.tenancy import OrgScopedModel
from organizations.models import Membership
from tests.automations.factories import AutomationFactory, make_run
from tests.downloads.factories import AssetFactory, DownloadFactory, link
from tests.helpers import assert_error, assert_foreign_looks_missing, make_member
from tests.learn.factories import ActivityFactory
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db
MISSING = str(uuid.UUID(int=0x01900000_0000_7000_8000_000000000000))


def api_routes() -> set[str]:
    found: set[str] = set()

    def walk(patterns, prefix: str) -> None:
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, route)
            elif isinstance(entry, URLPattern) and route.startswith("api/"):
                found.add(route)

    walk(get_resolver().url_patterns, "")
    return found


def api_routes_with_ids() -> set[str]:
    return {route for route in api_routes() if "<id:" in route}


@pytest.fixture
def world(org, other_org):
    """One of everything in each organization; ``other`` holds the foreign ids."""
    theirs = make_member(other_org)
    their_download, their_asset = DownloadFactory(org=other_org), AssetFactory(org=other_org)
    link(their_download, their_asset)
    their_activity = ActivityFactory(org=other_org, module__course__org=other_org)
    Enrollment.all_orgs.create(
        org=other_org, course=their_activity.course, membership=theirs.membership
    )
    return {
        "my_member": make_member(org).membership,
        "my_course": ActivityFactory(org=org, module__course__org=org).course,
        "member": theirs.membership,
        "invite": make_invite(other_org)[0],
        "my_download": DownloadFactory(org=org),
        "my_asset": AssetFactory(org=org),
        "download": their_download,
        "asset": their_asset,
        "activity": their_activity,
        "course": their_activity.course,
        "automation": (their_automation := AutomationFactory(org=other_org)),
        "run": make_run(their_automation, status="failed"),
    }


# route -> cases of (method, url with a foreign id, the same url with a missing id, body)
CASES = {
    "api/downloads/<id:downloadId>/assets": lambda w: [
        (
            "POST",
            f"/api/downloads/{w['download'].id}/assets",
            f"/api/downloads/{MISSING}/assets",
            {"assetId": str(w["my_asset"].id)},
        ),
        (
            "POST",
            f"/api/downloads/{w['my_download'].id}/assets",
            f"/api/downloads/{w['my_download'].id}/assets",
            {"assetId": str(w["asset"].id)},
        ),
        (
            "GET",
            f"/api/downloads/{w['download'].id}/assets",
            f"/api/downloads/{MISSING}/assets",
            None,
        ),
    ],
    "api/downloads/<id:downloadId>/assets/<id:assetId>": lambda w: [
        (
            "DELETE",
            f"/api/downloads/{w['download'].id}/assets/{w['asset'].id}",
            f"/api/downloads/{MISSING}/assets/{MISSING}",
            None,
        ),
        (
            "DELETE",
            f"/api/downloads/{w['my_download'].id}/assets/{w['asset'].id}",
            f"/api/downloads/{w['my_download'].id}/assets/{MISSING}",
            None,
        ),
    ],
    "api/learn/courses/<id:courseId>/activities": lambda w: [
        (
            "GET",
            f"/api/learn/courses/{w['course'].id}/activities",
            f"/api/learn/courses/{MISSING}/activities",
            None,
        ),
    ],
    "api/learn/courses/<id:courseId>": lambda w: [
        ("GET", f"/api/learn/courses/{w['course'].id}", f"/api/learn/courses/{MISSING}", None),
    ],
    "api/learn/courses/<id:courseId>/progress": lambda w: [
        (
            "GET",
            f"/api/learn/courses/{w['course'].id}/progress",
            f"/api/learn/courses/{MISSING}/progress",
            None,
        ),
    ],
    "api/learn/courses/<id:courseId>/enrollments": lambda w: [
        (
            "GET",
            f"/api/learn/courses/{w['course'].id}/enrollments",
            f"/api/learn/courses/{MISSING}/enrollments",
            None,
        ),
        (
            "POST",
            f"/api/learn/courses/{w['course'].id}/enrollments",
            f"/api/learn/courses/{MISSING}/enrollments",
            {"memberIds": [str(w["my_member"].id)]},
        ),
    ],
    "api/learn/courses/<id:courseId>/report": lambda w: [
        (
            "GET",
            f"/api/learn/courses/{w['course'].id}/report",
            f"/api/learn/courses/{MISSING}/report",
            None,
        ),
    ],
    "api/learn/courses/<id:courseId>/enrollments/<id:memberId>": lambda w: [
        (
            "DELETE",
            f"/api/learn/courses/{w['course'].id}/enrollments/{w['my_member'].id}",
            f"/api/learn/courses/{MISSING}/enrollments/{w['my_member'].id}",
            None,
        ),
        (
            "DELETE",
            f"/api/learn/courses/{w['my_course'].id}/enrollments/{w['member'].id}",
            f"/api/learn/courses/{w['my_course'].id}/enrollments/{MISSING}",
            None,
        ),
    ],
    "api/organizations/members/<id:memberId>/tokens": lambda w: [
        (
            "POST",
            f"/api/organizations/members/{w['member'].id}/tokens",
            f"/api/organizations/members/{MISSING}/tokens",
            {},
        ),
    ],
    "api/organizations/invites/<id:inviteId>/revoke": lambda w: [
        (
            "POST",
            f"/api/organizations/invites/{w['invite'].id}/revoke",
            f"/api/organizations/invites/{MISSING}/revoke",
            None,
        ),
    ],
    "api/automations/<id:id>": lambda w: [
        ("GET", f"/api/automations/{w['automation'].id}", f"/api/automations/{MISSING}", None),
        (
            "PATCH",
            f"/api/automations/{w['automation'].id}",
            f"/api/automations/{MISSING}",
            {"enabled": False},
        ),
        ("DELETE", f"/api/automations/{w['automation'].id}", f"/api/automations/{MISSING}", None),
    ],
    "api/automations/<id:id>/runs": lambda w: [
        (
            "GET",
            f"/api/automations/{w['automation'].id}/runs",
            f"/api/automations/{MISSING}/runs",
            None,
        ),
    ],
    "api/automations/<id:id>/rotate-secret": lambda w: [
        (
            "POST",
            f"/api/automations/{w['automation'].id}/rotate-secret",
            f"/api/automations/{MISSING}/rotate-secret",
            None,
        ),
    ],
    "api/automations/<id:id>/test": lambda w: [
        (
            "POST",
            f"/api/automations/{w['automation'].id}/test",
            f"/api/automations/{MISSING}/test",
            None,
        ),
    ],
    "api/automations/<id:id>/runs/<id:runId>/retry": lambda w: [
        (
            "POST",
            f"/api/automations/{w['automation'].id}/runs/{w['run'].id}/retry",
            f"/api/automations/{MISSING}/runs/{MISSING}/retry",
            None,
        ),
    ],
}
# Ids carried in bodies rather than paths.
BODY_CASES = [
    lambda w: (
        "POST",
        "/api/learn/progress",
        {"activity": str(w["activity"].id), "reports": []},
        {"activity": MISSING, "reports": []},
    ),
]
# Tenant-owned models and how the API reaches them by id (or why it never does).
MODELS = {
    "downloads.Asset": "by id in link bodies and unlink paths",
    "downloads.Download": "by id in link and unlink paths",
    "downloads.DownloadAsset": "only inside a download's list",
    "learn.Course": "by id in the outline, activities and progress paths; listed by enrollment",
    "learn.Module": "never by id",
    "learn.Activity": "by id in progress bodies",
    "learn.Enrollment": "never by id; decides not_enrolled",
    "learn.Progress": "never by id",
    "learn.ProgressReport": "never by id",
    "learn.CourseCompletion": "never by id; read through the caller's course progress and "
    "the organization's completions feed",
    "learn.CompletionSequence": "never read by the API; written by a completion",
    "learn.ActivityFunnel": "never by id; read through its course's report",
    "organizations.Membership": "never by id; the token's own",
    "organizations.ApiToken": "never by id; looked up by hash",
    "organizations.Invite": "by token, which is global by design; see TOKEN_ROUTES; by id "
    "to revoke",
    "organizations.InviteCourse": "never by id; the courses of its invite",
    "organizations.IdempotencyRecord": "never by id; scoped to the caller, or found by its "
    "invite's token and the caller's Idempotency-Key",
    "automations.Automation": "by id in the automation path",
    "automations.AutomationRun": "listed by its automation's id in the runs path; by id "
    "(under its automation's) in the retry path",
    "automations.AutomationRevision": "never by id; read through its automation's runs",
    "automations.AutomationRunAction": "never by id; read through its run",
    "bundles.Bundle": "listed only, filtered by the caller's organization",
    "bundles.BundleCourse": "admin only",
    "bundles.BundleDownload": "admin only",
}


# Public routes whose path carries an invite token instead of an id, and what keeps them
# inside one organization.
TOKEN_ROUTES = {
    "api/organizations/invites/<path:token>": "answers only the invitee's names",
    "api/organizations/invites/<path:token>/accept": "its token sees only the invite's "
    "organization (test_an_accepted_invites_token_sees_only_its_organization)",
}


def api_routes_with_tokens() -> set[str]:
    return {route for route in api_routes() if "<path:token>" in route}


def test_every_api_route_with_a_token_is_accounted_for():
    assert api_routes_with_tokens() == set(TOKEN_ROUTES)


@pytest.mark.parametrize("route", sorted(CASES))
def test_an_accepted_invites_token_sees_only_its_organization(api, org, world, route):
    _, raw = make_invite(org, role=Membership.Role.OWNER)
    accepted = api.post(f"/api/organizations/invites/{raw}/accept")
    assert accepted.status_code == 201
    token = accepted.json()["token"]
    for method, foreign, missing, body in CASES[route](world):
        assert_foreign_looks_missing(api, method, foreign, missing, token=token, data=body)


def test_every_api_route_with_an_id_has_an_isolation_case():
    assert api_routes_with_ids() == set(CASES)


def test_every_tenant_owned_model_is_accounted_for():
    owned = {model._meta.label for model in apps.get_models() if issubclass(model, OrgScopedModel)}
    assert owned <= set(MODELS), owned - set(MODELS)


@pytest.mark.parametrize("route", sorted(CASES))
def test_foreign_ids_in_paths_look_missing(api, owner, world, route):
    for method, foreign, missing, body in CASES[route](world):
        assert_foreign_looks_missing(api, method, foreign, missing, token=owner.token, data=body)


@pytest.mark.parametrize("case", BODY_CASES)
def test_foreign_ids_in_bodies_look_missing(api, owner, world, case):
    method, url, foreign_body, missing_body = case(world)
    foreign = assert_error(
        api.request(method, url, foreign_body, token=owner.token), 404, "not_found"
    )
    missing = assert_error(
        api.request(method, url, missing_body, token=owner.token), 404, "not_found"
    )
    assert foreign["message"] == missing["message"]


MALFORMED_IDS = ["not-a-uuid", "1", MISSING.replace("-", ""), "{" + MISSING + "}", MISSING + "0"]


@pytest.mark.parametrize("route", sorted(CASES))
@pytest.mark.parametrize("malformed", MALFORMED_IDS)
def test_a_malformed_path_id_is_401_first_then_an_unknown_record(
    api, owner, world, route, malformed
):
    """CONTRACT 1: authentication comes before existence, and a malformed id in a path is an
    unknown record, answered with the same body as a well-formed id that does not exist."""
    for method, _, missing, body in CASES[route](world):
        if MISSING not in missing:
            continue
        url = missing.replace(MISSING, malformed)
        assert_error(api.request(method, url, body), 401, "unauthenticated")
        expected = assert_error(
            api.request(method, missing, body, token=owner.token), 404, "not_found"
        )
        found = assert_error(api.request(method, url, body, token=owner.token), 404, "not_found")
        assert found["message"] == expected["message"]


@pytest.mark.parametrize("route", sorted(CASES))
def test_path_ids_are_case_insensitive(api, owner, world, route):
    """An upper-case id is the same id: another organization's still looks missing, exactly
    as its lower-case spelling does."""
    for method, foreign, missing, body in CASES[route](world):
        shouted = _UUID.sub(lambda found: found.group().upper(), foreign)
        assert shouted != foreign
        assert_foreign_looks_missing(api, method, shouted, missing, token=owner.token, data=body)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_an_upper_case_id_reads_the_record_and_is_answered_lower_case(api, owner):
    automation = AutomationFactory(org=owner.org)
    response = api.get(f"/api/automations/{str(automation.id).upper()}", token=owner.token)
    assert response.status_code == 200, response.content
    assert response.json()["id"] == str(automation.id)

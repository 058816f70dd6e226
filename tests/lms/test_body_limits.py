"""CONTRACT section 5 on every write route that takes a body (one per app): a body nests
arrays and objects at most 100 levels deep, the outermost counting as level 1 (deeper: 400
``malformed_request``, nothing stored); its charset is ``utf-8`` or ``us-ascii`` in any
case, or none, and any other ``charset=`` is 415 ``unsupported_media_type``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from automations.models import Automation
from downloads.models import DownloadAsset
from learn.models import ProgressReport
from organizations.models import Invite, Membership
from tests.automations.factories import welcome_email
from tests.downloads.factories import AssetFactory, DownloadFactory
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, EnrollmentFactory
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db

LIMIT = 100  # the contract's figure, not the code's constant: the tests hold the code to it


def nested(levels: int) -> str:
    """``levels`` arrays and objects inside one another, alternating, as JSON text."""
    text = "1"
    for level in range(levels):
        text = f"[{text}]" if level % 2 else f'{{"n": {text}}}'
    return text


@dataclass
class Route:
    """A write route: a body holding a value ``x`` below ``x_levels`` levels (the body itself
    included) and the answer to it when the body can be read; a body it takes and the
    status of that; and how many rows it wrote."""

    url: str
    token: str | None
    make_body: Any  # (x: str) -> the body's JSON text, holding x as a value
    x_levels: int
    read: tuple[int, str | None]  # (status, error code or None) of make_body(...), when read
    fine_body: str
    fine_status: int
    stored: Any  # () -> how many rows the route wrote


def progress_route(org) -> Route:
    learner = make_member(org)
    activity = ActivityFactory(module__course__org=org, settings={"completion": {"type": "view"}})
    EnrollmentFactory(course=activity.course, membership=learner.membership)
    return Route(
        url="/api/learn/progress",
        token=learner.token,
        # body (1) > reports (2) > the report (3) > x
        make_body=lambda x: f'{{"activity": "{activity.id}", "reports": [{{"x": {x}}}]}}',
        x_levels=3,
        read=(200, None),
        fine_body=f'{{"activity": "{activity.id}", "reports": [{{"type": "note"}}]}}',
        fine_status=200,
        stored=lambda: ProgressReport.all_orgs.count(),
    )


def link_route(org) -> Route:
    staff = make_member(org, Membership.Role.INSTRUCTOR)
    download, asset = DownloadFactory(org=org), AssetFactory(org=org)
    return Route(
        url=f"/api/downloads/{download.id}/assets",
        token=staff.token,
        make_body=lambda x: f'{{"assetId": "{asset.id}", "x": {x}}}',
        x_levels=1,
        read=(201, None),  # other fields are ignored
        fine_body=f'{{"assetId": "{asset.id}"}}',
        fine_status=201,
        stored=lambda: DownloadAsset.all_orgs.count(),
    )


def automation_route(org) -> Route:
    owner = make_member(org, Membership.Role.OWNER)
    fields = {"name": "Deep", "trigger": "enrollment.created", "actions": [welcome_email()]}
    prefix = json.dumps(fields)[:-1]
    return Route(
        url="/api/automations",
        token=owner.token,
        make_body=lambda x: f'{prefix}, "x": {x}}}',
        x_levels=1,
        read=(201, None),  # other fields are ignored
        fine_body=json.dumps(fields),
        fine_status=201,
        stored=lambda: Automation.all_orgs.count(),
    )


def accept_route(org) -> Route:
    _, raw = make_invite(org)
    return Route(
        url=f"/api/organizations/invites/{raw}/accept",
        token=None,
        make_body=lambda x: f'{{"x": {x}}}',
        x_levels=1,
        # No field is accepted: a body within the limit is a validation_error naming "x".
        read=(400, "validation_error"),
        fine_body="{}",
        fine_status=201,
        stored=lambda: Invite.all_orgs.filter(state="accepted").count(),
    )


ROUTES = {
    "learn": progress_route,
    "downloads": link_route,
    "automations": automation_route,
    "organizations": accept_route,
}


def post(api, route: Route, text: str | bytes, content_type: str = "application/json"):
    return api.request("POST", route.url, raw=text, token=route.token, content_type=content_type)


def assert_read(route: Route, response) -> None:
    status, code = route.read
    if code is None:
        assert response.status_code == status, response.content[:300]
    else:
        assert_error(response, status, code)


@pytest.mark.parametrize("app", sorted(ROUTES))
def test_a_body_100_levels_deep_is_read(api, org, app):
    route = ROUTES[app](org)
    text = route.make_body(nested(LIMIT - route.x_levels))
    assert max_depth(json.loads(text)) == LIMIT
    assert_read(route, post(api, route, text))


@pytest.mark.parametrize("app", sorted(ROUTES))
def test_a_body_101_levels_deep_is_malformed_and_nothing_is_stored(api, org, app):
    route = ROUTES[app](org)
    text = route.make_body(nested(LIMIT + 1 - route.x_levels))
    assert max_depth(json.loads(text)) == LIMIT + 1
    body = assert_error(post(api, route, text), 400, "malformed_request")
    assert "100 levels" in body["message"]
    assert route.stored() == 0


def test_the_100th_level_may_be_anywhere_and_strings_do_not_count(api, org):
    route = progress_route(org)
    brackets = json.dumps({"s": "[{" * 300 + '\\"]'})  # brackets in a string, an escaped quote

    def x(levels: int) -> str:
        # Beside shallower values, after the string: the deepest value is ``levels`` deep.
        return f"[{brackets}, [[1]], {nested(levels)}]"

    text = route.make_body(x(LIMIT - route.x_levels))
    assert max_depth(json.loads(text)) == LIMIT + 1
    assert_error(post(api, route, text), 400, "malformed_request")
    text = route.make_body(x(LIMIT - route.x_levels - 1))
    assert max_depth(json.loads(text)) == LIMIT
    assert post(api, route, text).status_code == 200
    assert route.stored() == 1


def max_depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((max_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((max_depth(v) for v in value), default=0)
    return 0


# --- charsets --------------------------------------------------------------------------------

ACCEPTED = ["utf-8", "UTF-8", "Utf-8", "us-ascii", "US-ASCII", '"utf-8"']
REFUSED = ["latin-1", "ISO-8859-1", "utf-16", "UTF-16LE", "utf-32", "cp1252", "utf8", "ascii", ""]


@pytest.mark.parametrize("app", sorted(ROUTES))
@pytest.mark.parametrize("charset", [None, *ACCEPTED])
def test_utf_8_us_ascii_or_no_charset_is_read(api, org, app, charset):
    route = ROUTES[app](org)
    content_type = "application/json" + (f"; charset={charset}" if charset is not None else "")
    response = post(api, route, route.fine_body.encode(), content_type)
    assert response.status_code == route.fine_status, response.content[:300]
    assert route.stored() == 1


@pytest.mark.parametrize("app", sorted(ROUTES))
@pytest.mark.parametrize("charset", REFUSED)
def test_any_other_charset_is_415_and_nothing_is_stored(api, org, app, charset):
    route = ROUTES[app](org)
    text = route.fine_body
    # Sent in the charset named, where Python knows it: the body is readable in it.
    encoding = {"": "utf-8", "utf8": "utf-8"}.get(charset, charset)
    response = post(api, route, text.encode(encoding), f"application/json; charset={charset}")
    body = assert_error(response, 415, "unsupported_media_type")
    assert "charset" in body["message"]
    assert route.stored() == 0


def test_the_charset_parameter_is_found_in_any_case_and_position(api, org):
    route = link_route(org)
    for content_type in (
        "application/json; CHARSET=latin-1",
        "application/json;charset=utf-16;foo=bar",
        "application/json; foo=bar; charset=latin-1",
    ):
        response = post(api, route, route.fine_body, content_type)
        assert_error(response, 415, "unsupported_media_type")
    response = post(api, route, route.fine_body, "application/json; foo=bar; Charset=UTF-8")
    assert response.status_code == 201


def test_a_us_ascii_body_with_other_bytes_is_malformed(api, org):
    route = progress_route(org)
    text = route.make_body('"caf\u00e9"').encode("utf-8")
    response = post(api, route, text, "application/json; charset=us-ascii")
    assert_error(response, 400, "malformed_request")
    assert route.stored() == 0


def test_utf_8_text_is_read_as_sent(api, org):
    route = progress_route(org)
    text = route.make_body('"caf\u00e9 \U0001f600"').encode("utf-8")
    assert post(api, route, text, "application/json; charset=UTF-8").status_code == 200
    assert ProgressReport.all_orgs.get().payload == {"x": "caf\u00e9 \U0001f600"}


def test_a_read_with_a_refused_charset_is_415_too(api, org):
    """Checked before anything reads the request, on every route of the API."""
    member = make_member(org)
    response = api.client.get(
        "/api/bundles",
        CONTENT_TYPE="application/json; charset=latin-1",
        HTTP_AUTHORIZATION=f"Bearer {member.token}",
    )
    assert_error(response, 415, "unsupported_media_type")

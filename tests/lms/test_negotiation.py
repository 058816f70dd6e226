"""The negotiation remembered per Accept header answers exactly what DRF's does."""

import pytest
from django.http import Http404
from django.test import RequestFactory
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request

from lms.web import negotiation
from lms.web.negotiation import JsonFallbackNegotiation
from lms.web.renderers import OrjsonRenderer
from tests.automations.factories import AutomationFactory

ACCEPT_HEADERS = [
    None,
    "",
    "*/*",
    "application/json",
    "application/json; indent=4",
    "application/json;indent=2, text/html;q=0.9",
    "text/html",
    "text/html, application/xhtml+xml, */*;q=0.8",
    "application/*;q=0.5, text/plain",
    "application/vnd.api+json",
    ";;;, ,",
    "application/json; q=0; indent=3",
    "x" * 300 + ", application/json",
]
RENDERER_SETS = [
    [OrjsonRenderer],
    [JSONRenderer, BrowsableAPIRenderer],
    [BrowsableAPIRenderer, JSONRenderer],
]


def drf_answer(request, renderers):
    """DRF's own negotiation, with the fallback to the first renderer."""
    try:
        renderer, media_type = DefaultContentNegotiation().select_renderer(request, renderers)
    except (NotAcceptable, Http404):
        renderer, media_type = renderers[0], renderers[0].media_type
    return type(renderer), media_type


def make_request(accept, query=""):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    return Request(RequestFactory().get(f"/api/bundles{query}", **headers))


@pytest.fixture(autouse=True)
def _forgotten():
    negotiation._chosen.clear()
    yield
    negotiation._chosen.clear()


@pytest.mark.parametrize("classes", RENDERER_SETS, ids=lambda c: ",".join(k.__name__ for k in c))
@pytest.mark.parametrize("accept", ACCEPT_HEADERS)
def test_remembered_answer_is_drfs_answer(accept, classes):
    expected = drf_answer(make_request(accept), [cls() for cls in classes])
    for _ in range(2):  # the first call works it out, the second remembers it
        renderers = [cls() for cls in classes]
        renderer, media_type = JsonFallbackNegotiation().select_renderer(
            make_request(accept), renderers
        )
        assert (type(renderer), media_type) == expected
        assert renderer in renderers  # this request's instance, not a remembered one
    assert len(negotiation._chosen) == 1


@pytest.mark.parametrize("query", ["?format=json", "?format=api", "?format=xml", "?page=2"])
def test_a_format_override_is_negotiated_as_drf_does(query):
    classes = [JSONRenderer, BrowsableAPIRenderer]
    for accept in ("text/html", "application/json"):
        renderers = [cls() for cls in classes]
        renderer, media_type = JsonFallbackNegotiation().select_renderer(
            make_request(accept, query), renderers
        )
        expected = drf_answer(make_request(accept, query), [cls() for cls in classes])
        assert (type(renderer), media_type) == expected


def test_the_memory_is_bounded():
    for n in range(negotiation.CACHE_SIZE * 2 + 5):
        JsonFallbackNegotiation().select_renderer(
            make_request(f"application/json; indent={n}"), [OrjsonRenderer()]
        )
        assert len(negotiation._chosen) <= negotiation.CACHE_SIZE


@pytest.mark.django_db
def test_each_request_gets_its_own_headers_answer_over_http(api, owner):
    automation = AutomationFactory(org=owner.membership.org)
    path = f"/api/automations/{automation.id}"
    for accept in ["application/json", "application/json; indent=2", "*/*", "text/html"] * 2:
        response = api.get(path, token=owner.token, headers={"Accept": accept})
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response.content.startswith(b'{\n  "' if "indent" in accept else b'{"')
    unknown_format = api.get(f"{path}?format=xml", token=owner.token)
    assert unknown_format.status_code == 200
    assert unknown_format.json()["id"] == str(automation.id)

"""The orjson renderer writes what DRF's JSONRenderer writes, and falls back to it for what
orjson refuses, so no body changes and none becomes a 500; an output serializer built once
answers what a new one would."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ErrorDetail
from rest_framework.renderers import JSONRenderer

from lms.web.renderers import OrjsonRenderer
from tests.automations.factories import AutomationFactory

DOCUMENTS = [
    {"name": 'Ünïcødé \u2013 日本語 \u2028 "quoted" \\ </script>', "n": 3, "ok": True, "x": None},
    [1, -2, 2**63 - 1, [], {}, [{"a": [{"b": "c"}]}]],
    {"detail": ErrorDetail("Not found.", code="not_found"), "lazy": gettext_lazy("Lazy")},
    {"total": 0, "rows": [], "page": 1, "pageSize": 20},
]


@pytest.mark.parametrize("data", DOCUMENTS)
def test_bodies_are_byte_for_byte_those_of_drf(data):
    assert OrjsonRenderer().render(data) == JSONRenderer().render(data)


def test_numbers_read_back_the_same():
    data = {"f": [0.1, 1e-7, 1.5e300, -0.0, 12.0], "d": Decimal("1.10")}
    assert json.loads(OrjsonRenderer().render(data)) == json.loads(JSONRenderer().render(data))


def test_what_orjson_refuses_is_rendered_by_drf():
    data = {"big": 10**30, "nested": [{"bigger": -(10**40)}]}
    assert OrjsonRenderer().render(data) == JSONRenderer().render(data)


def test_no_body_stays_no_body():
    assert OrjsonRenderer().render(None) == b""


@pytest.mark.django_db
def test_an_endpoint_answers_drf_bytes_and_indents_on_request(api, owner):
    automation = AutomationFactory(org=owner.membership.org, name="Ünïcødé ✓")
    response = api.get(f"/api/automations/{automation.id}", token=owner.token)
    assert response.status_code == 200
    assert response.content == JSONRenderer().render(response.json())
    indented = api.get(
        f"/api/automations/{automation.id}",
        token=owner.token,
        headers={"Accept": "application/json; indent=2"},
    )
    assert indented.status_code == 200
    assert indented.content.startswith(b'{\n  "orgId"')
    assert indented.json() == response.json()


def _answers(data, status, accept, renderer_classes):
    """The same view's answer as a DRF ``Response`` and through ``rendered``."""
    from django.test import RequestFactory
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from lms.web.renderers import rendered

    class Drf(APIView):
        authentication_classes, permission_classes = [], []

        def get(self, request):
            return Response(data, status=status)

    class Ours(Drf):
        def get(self, request):
            return rendered(request, data, status=status)

    answers = []
    for view in (Drf, Ours):
        view.renderer_classes = renderer_classes
        request = RequestFactory().get("/api/x", HTTP_ACCEPT=accept)
        response = view.as_view()(request)
        if hasattr(response, "render"):
            response = response.render()
        answers.append((response.status_code, response.content, dict(response.items())))
    return answers


@pytest.mark.parametrize("data", [*DOCUMENTS, {"big": 10**30}, None])
@pytest.mark.parametrize("status", [200, 201])
@pytest.mark.parametrize("accept", ["application/json", "*/*", "application/json; indent=2"])
def test_rendered_answers_what_a_drf_response_answers(data, status, accept):
    drf, ours = _answers(data, status, accept, [OrjsonRenderer])
    assert ours == drf


def test_rendered_uses_the_negotiated_renderer():
    from rest_framework.renderers import BrowsableAPIRenderer

    classes = [OrjsonRenderer, BrowsableAPIRenderer]
    drf, ours = _answers({"a": 1}, 200, "application/json; indent=4", classes)
    assert ours == drf and ours[2]["Vary"] == "Accept"
    assert ours[1] == b'{\n    "a": 1\n}'

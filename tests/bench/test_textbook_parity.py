"""The textbook baseline (bench/textbook.py) answers what the service answers, for each
operation the load bench measures (bench/load.py's requests on the demo data): otherwise
the bench would compare two different products. Both are served in-process by the bench's
URLconf (bench/urls.py: the service's routes, and the textbook's under /textbook/)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from bench import learners
from bench.load import build_targets
from tests.helpers import ApiClient

pytestmark = pytest.mark.django_db

# Different in each answer of a write by nature: the new link's id and its times.
FRESH = {"id", "createdAt", "updatedAt"}


@pytest.fixture
def manifest(settings):
    settings.ROOT_URLCONF = "bench.urls"
    out = io.StringIO()
    call_command("seed_demo", "--json", stdout=out, stderr=io.StringIO())
    manifest = json.loads(out.getvalue())
    for key, tokens in learners.issue(manifest, 2).items():
        org = next(value for value in manifest.values() if value.get("id") == key)
        org["learners"] = tokens
    return manifest


def answer(api: ApiClient, prefix: str, request) -> tuple[int, object]:
    method, path, token, body = request
    response = api.request(method, prefix + path, body, token=token or None)
    return response.status_code, response.json()


def page(body: object) -> object:
    """A list's page as both say it: the service's envelope (``rows``, ``total``) and DRF's
    page-number one (``results``, ``count``) are told apart by design; their rows and
    counts must be the same."""
    if isinstance(body, dict) and "results" in body:
        return {"rows": body["results"], "total": body["count"]}
    if isinstance(body, dict) and "rows" in body:
        return {"rows": body["rows"], "total": body["total"]}
    return body


def comparable(body: object, fresh: set) -> object:
    """``body`` without the values a new row makes different each time (the ids in
    ``fresh`` and their times)."""
    if isinstance(body, list):
        return [comparable(item, fresh) for item in body]
    if isinstance(body, dict) and body.get("id") in fresh:
        return {key: value for key, value in body.items() if key not in FRESH}
    return body


def targets(manifest) -> dict:
    return {target.key: target for target in build_targets(manifest)}


@pytest.mark.parametrize(
    "key", ["activities", "courses", "outline", "bundles", "search", "invite", "automation"]
)
def test_each_read_answers_the_same_body(manifest, key):
    api = ApiClient()
    for (request,) in targets(manifest)[key].plans:
        (status, ours), textbook = answer(api, "", request), answer(api, "/textbook", request)
        assert status == 200
        assert (textbook[0], page(textbook[1])) == (status, page(ours))


def test_a_relink_answers_the_same_body(manifest):
    api = ApiClient()
    for (request,) in targets(manifest)["relink"].plans:
        ours, textbook = answer(api, "", request), answer(api, "/textbook", request)
        assert ours[0] == 200
        assert textbook == ours


def test_a_link_and_its_unlink_answer_the_same_bodies(manifest):
    api = ApiClient()
    # The demo's pair is linked: each unlinks it, then links it again (at the end).
    link, unlink = targets(manifest)["cycle"].plans[0]
    ours = [answer(api, "", unlink), answer(api, "", link)]
    textbook = [answer(api, "/textbook", unlink), answer(api, "/textbook", link)]
    assert [status for status, _ in ours] == [200, 201]
    new = {row["id"] for row in ours[1][1] + textbook[1][1]} - {row["id"] for row in ours[0][1]}
    assert len(new) == 2  # each made its own link
    assert [(s, comparable(b, new)) for s, b in textbook] == [
        (s, comparable(b, new)) for s, b in ours
    ]


def test_progress_answers_the_same_body(manifest):
    """Two learners in the same state, one reporting to each, every activity in turn."""
    api = ApiClient()
    plans = targets(manifest)["learners"].plans
    for ours_request, textbook_request in zip(plans[0], plans[1], strict=True):
        ours = answer(api, "", ours_request)
        assert ours[0] == 200
        assert answer(api, "/textbook", textbook_request) == ours

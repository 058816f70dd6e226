"""A tenant-owned model's default manager is ``all_orgs``, which reads across organizations
(docs/architecture.md, "The default manager"). Django's machinery that goes through the
default manager (related managers, ``get_object_or_404`` on the model, model forms' and
serializers' querysets, unique validation, ...) must not touch tenant rows on the API path:
the API reads through ``objects`` (``.for_org``) and names ``all_orgs`` only where a request
finds its organization. These tests watch ``all_orgs`` during real API requests and fail
on any read of it that Django or DRF started rather than the project's own code."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.shortcuts import get_object_or_404

from learn.models import Course, Enrollment
from lms.tenancy import AllOrgsManager
from tests.helpers import make_member
from tests.lms.test_tenancy_guard import CASES, api_routes

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
MANAGER = str(Path(sys.modules["django.db.models.manager"].__file__))


def _ours(filename: str) -> bool:
    path = Path(filename).resolve()
    return path.is_relative_to(ROOT) and not path.is_relative_to(ROOT / ".venv")


@contextmanager
def machinery_reads(monkeypatch):
    """The reads of ``all_orgs`` (or a related manager built from it) started by code that
    is not the project's: (model label, file and function of the caller)."""
    seen: list[tuple[str, str]] = []
    original = AllOrgsManager.get_queryset

    def watched(manager):
        frame = sys._getframe(1)
        while frame is not None and (
            frame.f_code.co_filename == MANAGER or frame.f_code.co_name == "get_queryset"
        ):
            frame = frame.f_back
        if frame is not None and not _ours(frame.f_code.co_filename):
            caller = f"{frame.f_code.co_filename}:{frame.f_code.co_name}"
            seen.append((manager.model._meta.label, caller))
        return original(manager)

    with monkeypatch.context() as patch:
        patch.setattr(AllOrgsManager, "get_queryset", watched)
        yield seen


def test_the_watch_sees_django_reading_the_default_manager(monkeypatch, org):
    """What the API must not do, seen: ``get_object_or_404`` on the model class reads
    ``Course._default_manager``, which is ``all_orgs``."""
    course = Course.objects.for_org(org).create(org=org, title="Any")
    with machinery_reads(monkeypatch) as seen:
        assert get_object_or_404(Course, id=course.id) == course
        assert Course.all_orgs.filter(id=course.id).exists()  # ours: said in the code
    assert [label for label, _ in seen] == ["learn.Course"]
    assert "shortcuts.py" in seen[0][1]


@pytest.mark.parametrize("route", sorted(CASES))
def test_the_api_reads_no_tenant_row_through_the_default_manager(
    api, monkeypatch, org, other_org, route
):
    """Every API route that takes an id, called by the owner of the records it names (the
    tenancy guard's world, seen from its other organization: links, automations, runs, test
    sends, retries; a learner enrolled in its course: the course, its activities and
    progress), and called on another organization's records."""
    from tests.lms.test_tenancy_guard import world as make_world

    world = make_world.__wrapped__(org, other_org)
    theirs = make_member(other_org, role="owner")
    learner = make_member(other_org)
    Enrollment.all_orgs.create(org=other_org, course=world["course"], membership=learner.membership)
    mine = make_member(org, role="owner")
    with machinery_reads(monkeypatch) as seen:
        for method, url, missing, body in CASES[route](world):
            for token in (theirs.token, learner.token, mine.token):
                response = api.request(method, url, body, token=token)
                assert response.status_code < 500, (url, response.content)
            api.request(method, missing, body, token=mine.token)
    assert seen == []


def test_the_api_lists_read_no_tenant_row_through_the_default_manager(
    api, monkeypatch, org, other_org
):
    from tests.lms.test_tenancy_guard import world as make_world

    make_world.__wrapped__(org, other_org)
    theirs = make_member(other_org, role="owner")
    routes = sorted(r for r in api_routes() if "<" not in r)
    assert routes
    with machinery_reads(monkeypatch) as seen:
        for route in routes:
            response = api.request("GET", "/" + route, None, token=theirs.token)
            assert response.status_code < 500, (route, response.content)
    assert seen == []


def test_the_project_does_not_name_the_default_manager():
    """Code of the project reads tenant rows through ``objects`` or, said where it happens,
    ``all_orgs``; never through ``_default_manager``, whose reads the watch above would take
    for the project's own (migrations, which see historical models, excepted)."""
    named = [
        str(path.relative_to(ROOT))
        for app in ("lms", "organizations", "downloads", "learn", "bundles", "automations")
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and "_default_manager" in path.read_text()
    ]
    assert named == []

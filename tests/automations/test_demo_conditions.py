"""seed_demo's course.completed automations are aimed at the demo course (issue 28, CONTRACT
8.7): completing a course staff add later fires none of them."""

from __future__ import annotations

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction

from automations.models import Automation, AutomationRun
from lms.events import Event, emit
from organizations.models import Organization
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demos_course_completed_automations_fire_for_the_demo_course_only():
    out = StringIO()
    call_command("seed_demo", "--json", stdout=out, stderr=StringIO())
    data = json.loads(out.getvalue())["org"]
    org = Organization.objects.get(id=data["id"])
    first = data["courses"][0]["id"]
    aimed = Automation.objects.for_org(org).filter(trigger="course.completed", enabled=True)
    assert aimed.count() == 2
    assert all(a.conditions == {"courseIds": [first]} for a in aimed)

    new_course = CourseFactory(org=org, title="Added later")
    member = {"memberId": str(uuid.uuid4()), "email": "ada@example.com"}
    with transaction.atomic():
        emit(Event("course.completed", org.id, {"courseId": str(new_course.id), **member}))
    assert not AutomationRun.objects.for_org(org).exists()
    with transaction.atomic():
        emit(Event("course.completed", org.id, {"courseId": first, **member}))
    fired = AutomationRun.objects.for_org(org).values_list("automation__name", flat=True)
    assert sorted(fired) == ["Enroll in the follow-up course", "Report course completions"]

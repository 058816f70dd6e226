"""Domain reads of this app worth a name. Reads on hot paths answering the wire's text are
``automations.wire_reads``'."""

from __future__ import annotations

import uuid

from django.db.models import Min
from django.utils import timezone

from automations.models import Automation, AutomationRun
from learn.api import Activity, Course
from lms.ids import uuid7
from organizations.api import Organization


def oldest_pending_run_seconds() -> float:
    """Seconds since the oldest unfinished run became due, across organizations: pending
    since it was recorded, or held past its worker's lease. 0 when every unfinished run has
    a worker or waits for its next attempt."""
    now = timezone.now()
    oldest = (
        AutomationRun.objects.across_orgs()
        .filter(status__in=(AutomationRun.Status.PENDING, AutomationRun.Status.RUNNING))
        .filter(due_at__lte=now)
        .aggregate(oldest=Min("due_at"))["oldest"]
    )
    return 0.0 if oldest is None else (now - oldest).total_seconds()


def example_event_data(*, org: Organization, automation: Automation, caller) -> dict:
    """An example of the data of ``automation``'s trigger (CONTRACT 7.2's shape) for a test
    send: the caller as the member, and the course and activity the automation is aimed at
    (else the organization's first, else an example id), so that its e-mails read as real
    ones would."""
    conditions = automation.conditions or {}
    example_id = str(uuid.UUID(int=0x01900000_0000_7000_8000_000000000000))
    course_id = (conditions.get("courseIds") or [None])[0]
    activity_id = (conditions.get("activityIds") or [None])[0]
    trigger = automation.trigger
    if activity_id is None and trigger == "activity.completed":
        activity = Activity.objects.for_org(org).order_by("created_at", "id").first()
        activity_id = str(activity.id) if activity else example_id
        course_id = course_id or (str(activity.course_id) if activity else None)
    if course_id is None and trigger != "invite.accepted":
        course = Course.objects.for_org(org).order_by("created_at", "id").first()
        course_id = str(course.id) if course else example_id
    # A staff user who is no member of the organization: an example id, never null.
    membership_id = membership_id_of(caller) or example_id
    member = {"memberId": membership_id, "email": _user_of(caller).email}
    if trigger == "enrollment.created":
        return {"enrollmentId": str(uuid7()), "courseId": course_id, **member}
    if trigger == "activity.completed":
        return {"activityId": activity_id, "courseId": course_id, **member}
    if trigger == "course.completed":
        return {"courseId": course_id, **member}
    return {"inviteId": str(uuid7()), **member, "invitedBy": membership_id}


def _user_of(caller):
    return getattr(caller, "user", caller)


def membership_id_of(caller) -> str | None:
    """The caller's membership id when the caller is a Membership; None for a User."""
    return str(caller.id) if hasattr(caller, "user") else None

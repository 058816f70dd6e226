"""Reads of the learning area worth naming. Every query is scoped to the caller's org."""

from __future__ import annotations

import uuid

from django.db.models import Exists, OuterRef, QuerySet

from learn.models import Activity, Course, Enrollment
from lms.errors import NotEnrolled
from lms.tenancy import get_or_404
from organizations.models import Membership, Organization


def _enrolled(org: Organization, membership: Membership, course_ref) -> Exists:
    return Exists(Enrollment.objects.for_org(org).filter(membership=membership, course=course_ref))


def published_activities(org: Organization) -> QuerySet[Activity]:
    """Activities a learner may see: published, in a published module of a published course."""
    return Activity.objects.for_org(org).filter(
        published=True, module__published=True, course__published=True
    )


def progress_target(
    *, org: Organization, membership: Membership, activity_id: uuid.UUID
) -> Activity:
    """The published activity progress is reported on, annotated with ``enrolled``, in one
    query. Unknown, foreign or unpublished: NotFound."""
    queryset = (
        published_activities(org)
        .annotate(enrolled=_enrolled(org, membership, OuterRef("course_id")))
        .only("id", "course_id", "settings")
    )
    return get_or_404(queryset, id=activity_id)


def list_published_activities(
    *, org: Organization, membership: Membership, course_id: uuid.UUID
) -> list[Activity]:
    """The course's published activities of published modules, by module seq then seq.

    Course unknown, foreign or unpublished: NotFound; caller not enrolled: NotEnrolled.
    Two queries whatever the number of activities.
    """
    course = get_or_404(
        Course.objects.for_org(org)
        .filter(published=True)
        .annotate(enrolled=_enrolled(org, membership, OuterRef("pk")))
        .only("id"),
        id=course_id,
    )
    if not course.enrolled:
        raise NotEnrolled()
    return list(
        Activity.objects.for_org(org)
        .filter(course_id=course.id, published=True, module__published=True)
        .order_by("module__seq", "seq", "id")
    )

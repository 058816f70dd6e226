"""seed_demo part of this app: two published courses, one activity per completion rule, and
an unpublished course the learner is enrolled in (see docs/demo.md and lms/demo.py). Records
are found again by their natural keys (course title, module and activity position), so a
second run updates rather than duplicates; every run empties the demo members' progress,
reports, course completions and idempotency records."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from learn.models import (
    Activity,
    Course,
    CourseCompletion,
    Enrollment,
    Module,
    Progress,
)
from learn.services import enroll
from lms.demo import DemoOrg
from organizations.api import IdempotencyRecord

VIDEO_SECONDS = 600
DOCUMENT_PAGES = 10

# (module seq, title, published, [(activity seq, title, published, rule key or None, settings)])
FIRST_COURSE = (
    "Python from scratch",
    [
        (
            1,
            "Getting started",
            True,
            [
                (1, "Welcome", True, "view", {"completion": {"type": "view"}}),
                (
                    2,
                    "Set up your editor",
                    True,
                    "time",
                    {"completion": {"type": "time", "minSeconds": 60}},
                ),
                (
                    3,
                    "Your first program (video)",
                    True,
                    "media",
                    {
                        "completion": {"type": "media", "threshold": 0.9},
                        "duration": VIDEO_SECONDS,
                    },
                ),
                (4, "Style guide draft", False, None, {"completion": {"type": "view"}}),
            ],
        ),
        (
            2,
            "Practice",
            True,
            [
                (
                    1,
                    "Reading: the data model",
                    True,
                    "pages",
                    {"completion": {"type": "pages", "threshold": 1.0}, "pages": DOCUMENT_PAGES},
                ),
                (
                    2,
                    "Quiz: basics",
                    True,
                    "score",
                    {"completion": {"type": "score", "passingScore": 0.7}},
                ),
                (3, "Capstone exercise", True, "reported", {"completion": {"type": "reported"}}),
            ],
        ),
        (
            3,
            "Coming soon",
            False,
            [(1, "Async basics", True, None, {"completion": {"type": "view"}})],
        ),
    ],
)
SECOND_COURSE = (
    "Data analysis with pandas",
    [
        (
            1,
            "Introduction",
            True,
            [
                (1, "What pandas is for", True, None, None),
                (2, "Loading a CSV", True, None, {"completion": {"type": "reported"}}),
            ],
        )
    ],
)
# Not published yet, though the learner is enrolled: no course list shows it to them.
UNPUBLISHED_COURSE = (
    "Machine learning (draft)",
    [(1, "Foundations", True, [(1, "What a model learns", True, None, None)])],
)


def _course(demo: DemoOrg, definition, *, published: bool = True) -> dict[str, Any]:
    title, modules = definition
    course = Course.objects.filter(org=demo.org, title=title).order_by("created_at").first()
    if course is None:
        course = Course.objects.create(org=demo.org, title=title, published=published)
    elif course.published != published:
        course.published = published
        course.save(update_fields=["published", "updated_at"])
    listed: list[tuple[int, int, str]] = []
    unpublished: list[str] = []
    rules: dict[str, str] = {}
    for module_seq, module_title, module_published, activities in modules:
        module, _ = Module.objects.update_or_create(
            org=demo.org,
            course=course,
            seq=module_seq,
            defaults={"title": module_title, "published": module_published},
        )
        for seq, activity_title, published, rule, settings in activities:
            activity, _ = Activity.objects.update_or_create(
                org=demo.org,
                module=module,
                seq=seq,
                defaults={
                    "course": course,
                    "title": activity_title,
                    "published": published,
                    "settings": settings,
                },
            )
            if published and module_published:
                listed.append((module_seq, seq, str(activity.id)))
            else:
                unpublished.append(str(activity.id))
            if rule:
                rules[rule] = str(activity.id)
    return {
        "course": course,
        "manifest": {
            "id": str(course.id),
            "published": [activity_id for _, _, activity_id in sorted(listed)],
            "unpublished": unpublished,
            "rules": rules,
        },
    }


def seed(demo: DemoOrg) -> None:
    """Adds ``courses`` and ``unpublishedCourse`` to the manifest: the first course has the
    learner enrolled and one activity per completion rule; nobody is enrolled in the second;
    the learner is enrolled in the unpublished one too."""
    first = _course(demo, FIRST_COURSE)
    second = _course(demo, SECOND_COURSE)
    draft = _course(demo, UNPUBLISHED_COURSE, published=False)
    members = list(demo.members.values())
    learner = demo.members["learner"]

    courses = [first["course"], second["course"], draft["course"]]
    Enrollment.objects.filter(org=demo.org, course__in=courses).exclude(
        Q(course__in=[first["course"], draft["course"]], membership=learner)
    ).delete()
    enroll(membership=learner, course=first["course"])
    enroll(membership=learner, course=draft["course"])

    Progress.objects.filter(org=demo.org, membership__in=members).delete()
    CourseCompletion.objects.filter(org=demo.org, membership__in=members).delete()
    IdempotencyRecord.objects.filter(org=demo.org, membership__in=members).delete()
    demo.manifest["courses"] = [first["manifest"], second["manifest"]]
    demo.manifest["unpublishedCourse"] = draft["manifest"]["id"]

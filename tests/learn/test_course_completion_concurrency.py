"""Reports completing a course's last two activities at once (PostgreSQL, real threads): the
course is completed exactly once, never twice and never not at all."""

import pytest

from learn.models import CourseCompletion
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory, EnrollmentFactory
from tests.learn.test_progress_concurrency import post_at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROUNDS = 8


def test_the_last_two_activities_completed_at_once_complete_the_course_once(
    org, course, module, recorded_events
):
    activities = [ActivityFactory(module=module, seq=n) for n in (1, 2, 3)]
    learners = [make_member(org) for _ in range(ROUNDS)]
    for learner in learners:
        EnrollmentFactory(course=course, membership=learner.membership)
        bodies = [
            {"activity": str(activity.id), "reports": [{"type": "complete"}]}
            for activity in activities
        ]
        post_at_once(bodies[:1], learner.token)
        responses = post_at_once(bodies[1:], learner.token)
        assert [r.status_code for r in responses] == [200, 200]

    completed = CourseCompletion.all_orgs.filter(course=course)
    assert sorted(c.membership_id for c in completed) == sorted(
        learner.membership.id for learner in learners
    )
    events = [e for e in recorded_events if e.type == "course.completed"]
    assert sorted(e.data["memberId"] for e in events) == sorted(
        str(learner.membership.id) for learner in learners
    )

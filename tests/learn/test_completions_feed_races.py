"""The completions feed under concurrency (PostgreSQL, real threads, real HTTP): a cursor on a
sequence or a time skips a completion whose transaction commits after a later one's; this
feed's does not. A completion's position is given as its transaction's last step, under the
organization's sequence row, so a later position is never visible before an earlier one."""

from __future__ import annotations

import threading
import time

import pytest

from learn.models import CompletionSequence, CourseCompletion
from tests.helpers import at_once, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory
from tests.learn.test_completions_feed import read

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PROGRESS = "/api/learn/progress"


def complete(activity) -> dict:
    return {"activity": str(activity.id), "reports": [{"type": "complete"}]}


def test_a_completion_committing_after_a_later_one_is_neither_skipped_nor_repeated(
    live, org, owner, course, receive_events
):
    # Two courses: the two reports share no row but the organization's sequence.
    activity = ActivityFactory(module__course=course)
    other = ActivityFactory(module__course=CourseFactory(org=org))
    early, late = make_member(org), make_member(org)
    EnrollmentFactory(course=course, membership=early.membership)
    EnrollmentFactory(course=other.course, membership=late.membership)
    entered, release = threading.Event(), threading.Event()

    def hold_the_early_one(event) -> None:
        # Inside the early learner's completing transaction: its time is taken, its row not
        # yet written; it stays open until released.
        if event.type == "course.completed" and event.data["memberId"] == str(early.membership.id):
            entered.set()
            release.wait(30)

    receive_events(hold_the_early_one)
    answers: list = []
    held = threading.Thread(
        target=lambda: answers.append(live.post(PROGRESS, complete(activity), token=early.token))
    )
    held.start()
    try:
        assert entered.wait(30), "the early completion never started"
        start = read(live, owner.token)
        assert start["rows"] == []
        time.sleep(0.01)  # the later completion's time is strictly later
        assert live.post(PROGRESS, complete(other), token=late.token).status == 200
        page = read(live, owner.token, after=start["next"])
        assert [row["memberId"] for row in page["rows"]] == [str(late.membership.id)]
        assert read(live, owner.token, after=page["next"]) == {"rows": [], "next": page["next"]}
    finally:
        release.set()
        held.join(30)
    assert [answer.status for answer in answers] == [200]

    rest = read(live, owner.token, after=page["next"])
    assert [row["memberId"] for row in rest["rows"]] == [str(early.membership.id)]
    assert read(live, owner.token, after=rest["next"]) == {"rows": [], "next": rest["next"]}
    # They committed out of the order of their times: a cursor on completedAt (or on an
    # order taken before the commit) had passed the early one for good by the second page.
    times = dict(CourseCompletion.all_orgs.values_list("membership_id", "completed_at"))
    assert times[early.membership.id] < times[late.membership.id]
    assert [row["memberId"] for row in read(live, owner.token)["rows"]] == [
        str(late.membership.id),
        str(early.membership.id),
    ]


LEARNERS = 24


def test_a_reader_paging_while_24_learners_complete_at_once_sees_each_once(
    live, org, owner, course
):
    activity = ActivityFactory(module__course=course)
    learners = [make_member(org) for _ in range(LEARNERS)]
    for member in learners:
        EnrollmentFactory(course=course, membership=member.membership)
    served: list[str] = []
    done = threading.Event()

    def page_all_along() -> None:
        # The first page too: a completion may commit before the reader's first read.
        first = read(live, owner.token)
        served.extend(row["id"] for row in first["rows"])
        cursor = first["next"]
        while True:
            finished = done.is_set()  # read once more after the last commit
            page = read(live, owner.token, after=cursor, limit=3)
            served.extend(row["id"] for row in page["rows"])
            cursor = page["next"]
            if finished and not page["rows"]:
                return

    reader = threading.Thread(target=page_all_along)
    reader.start()
    try:
        answers = at_once(
            [
                # In-process clients, each on its own connection (no socket timeout under
                # a loaded machine); the reader pages over real HTTP.
                lambda client, member=member: client.post(
                    PROGRESS, complete(activity), token=member.token
                )
                for member in learners
            ]
        )
    finally:
        done.set()
        reader.join(60)
    assert [answer.status_code for answer in answers] == [200] * LEARNERS
    stored = list(CourseCompletion.all_orgs.order_by("position").values_list("id", "position"))
    assert [position for _, position in stored] == list(range(1, LEARNERS + 1))
    assert served == [str(id_) for id_, _ in stored]  # each once, none skipped, in order
    assert CompletionSequence.all_orgs.get(org=org).last == LEARNERS


def test_24_concurrent_completing_reports_of_one_learner_complete_the_course_once(
    live, org, owner, course, module
):
    activities = [ActivityFactory(module=module, seq=n) for n in range(1, LEARNERS + 1)]
    learner = make_member(org)
    EnrollmentFactory(course=course, membership=learner.membership)
    answers = at_once(
        [
            lambda client, activity=activity: client.post(
                PROGRESS, complete(activity), token=learner.token
            )
            for activity in activities
        ]
    )
    assert [answer.status_code for answer in answers] == [200] * LEARNERS
    assert list(CourseCompletion.all_orgs.values_list("membership_id", "position")) == [
        (learner.membership.id, 1)
    ]
    assert [row["memberId"] for row in read(live, owner.token)["rows"]] == [
        str(learner.membership.id)
    ]

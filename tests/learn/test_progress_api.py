"""POST /api/learn/progress (4.3): the server decides completion from every report so far."""

import json
from datetime import timedelta

import pytest

from learn.models import Progress, ProgressReport
from organizations.models import IdempotencyRecord
from tests.helpers import assert_error, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory, ModuleFactory
from tests.learn.progress import standing_statements
from tests.learn.reports import INVALID_REPORTS

pytestmark = pytest.mark.django_db

URL = "/api/learn/progress"
MISSING = "00000000-0000-7000-8000-000000000000"


def report(api, member, activity, *reports, **kwargs):
    body = {"activity": str(activity.id), "reports": list(reports)}
    return api.post(URL, body, token=member.token, **kwargs)


def answer(response) -> tuple[str, float]:
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert set(body) == {"status", "progress", "remaining"}
    assert (body["remaining"] is None) == (body["status"] == "completed"), body
    return body["status"], body["progress"]


def stored(activity) -> list[dict]:
    return list(
        ProgressReport.all_orgs.filter(progress__activity=activity)
        .order_by("created_at", "position")
        .values_list("payload", flat=True)
    )


# --- each rule from the first report to completion ----------------------------------------


@pytest.mark.parametrize("rule", [None, {"type": "view"}])
def test_opening_with_no_report_completes_a_view_rule(api, enrolled, make_activity, rule):
    """CONTRACT 4.3: an empty reports array is opening the activity, which completes view."""
    activity = make_activity(rule)
    assert answer(report(api, enrolled, activity)) == ("completed", 1.0)
    assert stored(activity) == []


def test_opening_does_not_complete_other_rules(api, enrolled, make_activity):
    activity = make_activity({"type": "reported"})
    assert answer(report(api, enrolled, activity)) == ("in-progress", 0.0)
    assert answer(report(api, enrolled, activity, {"type": "bookmark"})) == ("in-progress", 0.0)


def test_a_view_rule_completes_on_a_report_of_an_unknown_type(api, enrolled, make_activity):
    activity = make_activity({"type": "view"})
    assert answer(report(api, enrolled, activity, {"type": "bookmark", "at": 3})) == (
        "completed",
        1.0,
    )


def test_time_rule_sums_seconds(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 20})) == (
        "in-progress",
        0.333,
    )
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 30})) == (
        "in-progress",
        0.833,
    )
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 10})) == (
        "completed",
        1.0,
    )
    row = Progress.all_orgs.get(activity=activity)
    assert row.completed_at is not None and row.started_at <= row.completed_at


def test_media_rule_counts_overlaps_once_against_the_activity_duration(
    api, enrolled, make_activity
):
    activity = make_activity({"type": "media", "threshold": 0.9}, duration=600)
    # The client believes the video is 300 s long; the activity's own 600 s decides.
    first = {"type": "media", "from": 0, "to": 270, "duration": 300}
    assert answer(report(api, enrolled, activity, first)) == ("in-progress", 0.5)
    overlap = {"type": "media", "from": 100, "to": 270, "duration": 300}
    assert answer(report(api, enrolled, activity, overlap)) == ("in-progress", 0.5)
    rest = {"type": "media", "from": 270, "to": 540, "duration": 600}
    assert answer(report(api, enrolled, activity, rest)) == ("completed", 1.0)


def test_media_rule_without_a_set_duration_uses_the_largest_reported(api, enrolled, make_activity):
    activity = make_activity({"type": "media", "threshold": 0.5})
    segment = {"type": "media", "from": 0, "to": 50, "duration": 100}
    assert answer(report(api, enrolled, activity, segment)) == ("completed", 1.0)


def test_pages_rule_counts_distinct_pages(api, enrolled, make_activity):
    activity = make_activity({"type": "pages", "threshold": 1.0}, pages=4)
    pages = [{"type": "page", "page": p, "pages": 4} for p in (1, 2, 2, 1)]
    assert answer(report(api, enrolled, activity, *pages)) == ("in-progress", 0.5)
    assert answer(report(api, enrolled, activity, {"type": "page", "page": 3, "pages": 4})) == (
        "in-progress",
        0.75,
    )
    assert answer(report(api, enrolled, activity, {"type": "page", "page": 4, "pages": 4})) == (
        "completed",
        1.0,
    )


def test_score_rule_takes_the_best_score(api, enrolled, make_activity):
    activity = make_activity({"type": "score", "passingScore": 0.7})
    assert answer(
        report(api, enrolled, activity, {"type": "score", "score": 5, "maxScore": 10})
    ) == (
        "in-progress",
        0.714,
    )
    assert answer(
        report(api, enrolled, activity, {"type": "score", "score": 3, "maxScore": 10})
    ) == (
        "in-progress",
        0.714,
    )
    assert answer(
        report(api, enrolled, activity, {"type": "score", "score": 7, "maxScore": 10})
    ) == (
        "completed",
        1.0,
    )


def test_reported_rule_waits_for_a_complete_report(api, enrolled, make_activity):
    activity = make_activity({"type": "reported"})
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 600})) == (
        "in-progress",
        0.0,
    )
    assert answer(report(api, enrolled, activity, {"type": "complete"})) == ("completed", 1.0)


# --- what remains (8.5) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rule, lengths, reports, remaining",
    [
        (
            {"type": "time", "minSeconds": 60},
            {},
            [{"type": "time", "seconds": 20.5}],
            {"seconds": 40},
        ),
        (
            {"type": "media", "threshold": 0.9},
            {"duration": 600},
            [{"type": "media", "from": 0, "to": 270, "duration": 600}],
            {"seconds": 270},
        ),
        ({"type": "media", "threshold": 0.9}, {}, [], {"seconds": None}),
        (
            {"type": "pages", "threshold": 1.0},
            {"pages": 10},
            [{"type": "page", "page": p, "pages": 10} for p in (1, 2, 2)],
            {"pages": 8},
        ),
        ({"type": "pages", "threshold": 1.0}, {}, [{"type": "bookmark"}], {"pages": None}),
        (
            {"type": "score", "passingScore": 0.7},
            {},
            [{"type": "score", "score": 5, "maxScore": 10}],
            {"passingScore": 0.7, "best": 0.5},
        ),
        ({"type": "score", "passingScore": 0.7}, {}, [], {"passingScore": 0.7, "best": None}),
        ({"type": "reported"}, {}, [{"type": "time", "seconds": 3}], {"report": "complete"}),
    ],
)
def test_the_answer_says_what_remains_under_the_rule(
    api, enrolled, make_activity, rule, lengths, reports, remaining
):
    activity = make_activity(rule, **lengths)
    response = report(api, enrolled, activity, *reports)
    assert answer(response)[0] == "in-progress"
    assert response.json()["remaining"] == remaining


def test_remaining_shrinks_to_null_as_reports_arrive(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    lefts = [
        report(api, enrolled, activity, {"type": "time", "seconds": s}).json()["remaining"]
        for s in (20, 30, 9.5, 1, 5)
    ]
    assert lefts == [{"seconds": 40}, {"seconds": 10}, {"seconds": 1}, None, None]


def test_a_replayed_answer_says_what_remained_then(api, enrolled, make_activity):
    activity = make_activity({"type": "pages", "threshold": 1.0}, pages=4)
    headers = {"Idempotency-Key": "page-one"}
    first = report(
        api, enrolled, activity, {"type": "page", "page": 1, "pages": 4}, headers=headers
    )
    report(api, enrolled, activity, {"type": "page", "page": 2, "pages": 4})
    again = report(
        api, enrolled, activity, {"type": "page", "page": 1, "pages": 4}, headers=headers
    )
    assert first.json()["remaining"] == again.json()["remaining"] == {"pages": 3}
    assert again["Idempotent-Replayed"] == "true"


def test_completion_never_regresses_even_when_the_rule_gets_stricter(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 10})
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 10}))[0] == (
        "completed"
    )
    activity.settings = {"completion": {"type": "time", "minSeconds": 1000}}
    activity.save()
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 1})) == (
        "completed",
        1.0,
    )
    assert len(stored(activity)) == 2


def test_every_report_is_stored_as_received_with_the_request_id(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    sent = [
        {"type": "time", "seconds": 5, "client": {"build": "1.2.3"}},
        {"type": "hologram", "depth": [1, 2, 3]},
        {"type": "complete"},
    ]
    response = report(api, enrolled, activity, *sent, headers={"X-Request-ID": "trace-42"})
    assert answer(response) == ("in-progress", 0.083)
    rows = ProgressReport.all_orgs.filter(progress__activity=activity).order_by("position")
    assert [r.payload for r in rows] == sent
    assert [r.type for r in rows] == ["time", "hologram", "complete"]
    assert {r.request_id for r in rows} == {"trace-42"}
    assert {r.org_id for r in rows} == {activity.org_id}


def test_reports_with_text_jsonb_cannot_hold_are_still_stored_exactly(api, enrolled, make_activity):
    """A NUL character and a lone surrogate are valid JSON that PostgreSQL's jsonb refuses;
    the report is stored as received all the same, on every database."""
    activity = make_activity({"type": "time", "minSeconds": 60})
    sent = [
        {"type": "note\u0000x", "key\u0000": ["value\u0000", "\udab5"]},
        {"type": "time", "seconds": 5, "\u0000": None},
    ]
    assert answer(report(api, enrolled, activity, *sent)) == ("in-progress", 0.083)
    assert stored(activity) == sent
    types = ProgressReport.all_orgs.filter(progress__activity=activity).order_by("position")
    assert [r.type for r in types] == ["notex", "time"]


def test_unknown_report_types_are_stored_and_ignored(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    assert answer(report(api, enrolled, activity, {"type": "bookmark", "at": 3})) == (
        "in-progress",
        0.0,
    )
    assert stored(activity) == [{"type": "bookmark", "at": 3}]


@pytest.mark.parametrize(
    "odd",
    [
        {"note": "no type at all"},
        {"type": 7, "seconds": 600},
        {"type": None},
        {"type": ["time"], "seconds": 600},
        {"type": ""},
        {"type": "x" * 5000, "seconds": 600},
    ],
)
def test_reports_without_a_known_string_type_are_stored_and_ignored(
    api, enrolled, make_activity, odd
):
    """CONTRACT 4.3: a report is any JSON object; without a string type it is stored and
    ignored like a report of an unknown type."""
    activity = make_activity({"type": "time", "minSeconds": 60})
    sent = [odd, {"type": "time", "seconds": 6}]
    assert answer(report(api, enrolled, activity, *sent)) == ("in-progress", 0.1)
    assert stored(activity) == sent


def test_a_lone_surrogate_in_a_type_keeps_every_report(api, enrolled, make_activity):
    """An unpaired surrogate is valid JSON but no character: the batch is kept whole, the
    payload exactly as sent, and only the admin's type label shows U+FFFD."""
    activity = make_activity({"type": "time", "minSeconds": 60})
    sent = [{"type": "a\ud800b", "note\udc00": "\udbff"}, {"type": "time", "seconds": 6}]
    assert answer(report(api, enrolled, activity, *sent)) == ("in-progress", 0.1)
    assert stored(activity) == sent
    labels = ProgressReport.all_orgs.filter(progress__activity=activity).order_by("position")
    assert [r.type for r in labels] == ["a\ufffdb", "time"]


def test_progress_is_per_learner(api, enrolled, course, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    other = make_member(enrolled.org)
    EnrollmentFactory(course=course, membership=other.membership)
    report(api, enrolled, activity, {"type": "time", "seconds": 59})
    assert answer(report(api, other, activity, {"type": "time", "seconds": 30})) == (
        "in-progress",
        0.5,
    )


# --- validation: the whole request is refused and nothing is stored -----------------------


INVALID_REQUEST_REPORTS = [
    *((bad, f"reports.1.{field}") for bad, field in INVALID_REPORTS),
    (42, "reports.1"),
    ("time", "reports.1"),
    ([{"type": "complete"}], "reports.1"),
    (None, "reports.1"),
]


@pytest.mark.parametrize("bad, field", INVALID_REQUEST_REPORTS)
def test_an_invalid_report_rejects_the_whole_request(api, enrolled, make_activity, bad, field):
    activity = make_activity({"type": "time", "minSeconds": 60})
    report(api, enrolled, activity, {"type": "time", "seconds": 10})
    before = Progress.all_orgs.get(activity=activity).state
    response = report(api, enrolled, activity, {"type": "time", "seconds": 50}, bad)
    body = assert_error(response, 400, "validation_error")
    assert list(body["details"]) == [field]
    assert len(stored(activity)) == 1
    row = Progress.all_orgs.get(activity=activity)
    assert (row.state, row.status) == (before, "in-progress")


def test_a_rejected_first_request_creates_no_progress(api, enrolled, make_activity):
    activity = make_activity()
    response = report(api, enrolled, activity, {"type": "score", "score": 3, "maxScore": 2})
    assert_error(response, 400, "validation_error")
    assert not Progress.all_orgs.exists() and not ProgressReport.all_orgs.exists()


def test_every_invalid_report_is_named(api, enrolled, make_activity):
    activity = make_activity()
    response = report(
        api,
        enrolled,
        activity,
        {"type": "time", "seconds": -1},
        {"type": "complete"},
        {"type": "media", "from": 5, "to": 1, "duration": 9},
    )
    body = assert_error(response, 400, "validation_error")
    assert set(body["details"]) == {"reports.0.seconds", "reports.2.to"}


@pytest.mark.parametrize(
    "body, field",
    [
        ({"reports": []}, "activity"),
        ({"activity": "not-a-uuid", "reports": []}, "activity"),
        ({"activity": 12345, "reports": []}, "activity"),
        ({"activity": None, "reports": []}, "activity"),
        ({"activity": "0193b3d6a4c87f1e9d2b3c4d5e6f7a8b", "reports": []}, "activity"),
        ({"activity": MISSING}, "reports"),
        ({"activity": MISSING, "reports": None}, "reports"),
        ({"activity": MISSING, "reports": {"type": "time"}}, "reports"),
    ],
)
def test_malformed_body_is_a_validation_error_naming_the_field(api, enrolled, body, field):
    response = api.post(URL, body, token=enrolled.token)
    assert field in assert_error(response, 400, "validation_error")["details"]


def test_no_reports_counts_as_opening_the_activity(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    assert answer(report(api, enrolled, activity)) == ("in-progress", 0.0)
    row = Progress.all_orgs.get(activity=activity, membership=enrolled.membership)
    assert row.status == "in-progress" and row.started_at is not None
    assert stored(activity) == []


def test_one_hundred_reports_are_accepted(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    batch = [{"type": "time", "seconds": 0.5} for _ in range(100)]
    assert answer(report(api, enrolled, activity, *batch)) == ("in-progress", 0.833)
    assert len(stored(activity)) == 100
    positions = ProgressReport.all_orgs.values_list("position", flat=True).order_by("position")
    assert list(positions) == list(range(100))


def test_one_hundred_and_one_reports_are_refused(api, enrolled, make_activity):
    activity = make_activity()
    batch = [{"type": "time", "seconds": 1} for _ in range(101)]
    body = assert_error(report(api, enrolled, activity, *batch), 400, "validation_error")
    assert list(body["details"]) == ["reports"]
    assert not ProgressReport.all_orgs.exists() and not Progress.all_orgs.exists()


# --- access -------------------------------------------------------------------------------


def test_a_member_not_enrolled_is_refused(api, org, course, make_activity):
    outsider = make_member(org)
    activity = make_activity()
    response = report(api, outsider, activity, {"type": "complete"})
    assert_error(response, 403, "not_enrolled")
    assert not Progress.all_orgs.exists()


def test_staff_need_an_enrollment_too(api, owner, make_activity):
    assert_error(report(api, owner, make_activity()), 403, "not_enrolled")


def test_enrollment_in_another_course_does_not_count(api, enrolled, org):
    elsewhere = ActivityFactory(module=ModuleFactory(course=CourseFactory(org=org)))
    assert_error(report(api, enrolled, elsewhere), 403, "not_enrolled")


def test_another_organizations_activity_looks_missing(api, enrolled, other_org):
    foreign = ActivityFactory(module=ModuleFactory(course=CourseFactory(org=other_org)))
    # The id travels in the body, so the path-based helper does not apply; same check by hand.
    foreign_response = api.post(
        URL, {"activity": str(foreign.id), "reports": []}, token=enrolled.token
    )
    missing_response = api.post(URL, {"activity": MISSING, "reports": []}, token=enrolled.token)
    foreign_body = assert_error(foreign_response, 404, "not_found")
    assert foreign_body["message"] == assert_error(missing_response, 404, "not_found")["message"]


def test_a_learner_of_another_organization_gets_404_not_403(api, other_org, make_activity):
    stranger = make_member(other_org)
    assert_error(report(api, stranger, make_activity(), {"type": "complete"}), 404, "not_found")


@pytest.mark.parametrize("what", ["activity", "module", "course"])
def test_unpublished_activity_module_or_course_is_404(api, enrolled, make_activity, what):
    activity = make_activity()
    target = {"activity": activity, "module": activity.module, "course": activity.course}[what]
    target.published = False
    target.save()
    assert_error(report(api, enrolled, activity, {"type": "complete"}), 404, "not_found")
    assert not Progress.all_orgs.exists()


def test_without_a_token_is_401(api, make_activity):
    response = api.post(URL, {"activity": str(make_activity().id), "reports": []})
    assert_error(response, 401, "unauthenticated")


def test_validation_comes_before_existence_and_enrollment(api, org, other_org):
    outsider = make_member(org)
    foreign = ActivityFactory(module=ModuleFactory(course=CourseFactory(org=other_org)))
    bad = {"activity": str(foreign.id), "reports": [{"type": "time", "seconds": -1}]}
    assert_error(api.post(URL, bad, token=outsider.token), 400, "validation_error")


# --- Idempotency-Key ----------------------------------------------------------------------


def test_a_retry_with_the_same_key_answers_the_first_answer_and_stores_nothing(
    api, enrolled, make_activity
):
    activity = make_activity({"type": "time", "minSeconds": 60})
    headers = {"Idempotency-Key": "retry-1"}
    first = report(api, enrolled, activity, {"type": "time", "seconds": 30}, headers=headers)
    again = report(api, enrolled, activity, {"type": "time", "seconds": 30}, headers=headers)
    assert answer(first) == answer(again) == ("in-progress", 0.5)
    assert "Idempotent-Replayed" not in first and again["Idempotent-Replayed"] == "true"
    assert len(stored(activity)) == 1
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 30})) == (
        "completed",
        1.0,
    )


def test_a_key_reused_with_another_body_still_answers_the_first_answer(
    api, enrolled, make_activity
):
    activity, other = make_activity(), make_activity({"type": "reported"})
    headers = {"Idempotency-Key": "k"}
    first = answer(report(api, enrolled, activity, headers=headers))
    replay = report(api, enrolled, other, {"type": "complete"}, headers=headers)
    assert answer(replay) == first
    assert not Progress.all_orgs.filter(activity=other).exists()


def test_keys_are_scoped_to_the_caller(api, enrolled, course, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    other = make_member(enrolled.org)
    EnrollmentFactory(course=course, membership=other.membership)
    headers = {"Idempotency-Key": "same"}
    report(api, enrolled, activity, {"type": "time", "seconds": 30}, headers=headers)
    response = report(api, other, activity, {"type": "time", "seconds": 6}, headers=headers)
    assert answer(response) == ("in-progress", 0.1)
    assert "Idempotent-Replayed" not in response


def test_keys_expire_after_24_hours(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 60})
    headers = {"Idempotency-Key": "old"}
    report(api, enrolled, activity, {"type": "time", "seconds": 30}, headers=headers)
    record = IdempotencyRecord.all_orgs.get()
    IdempotencyRecord.all_orgs.filter(pk=record.pk).update(
        created_at=record.created_at - timedelta(hours=24, seconds=1)
    )
    again = report(api, enrolled, activity, {"type": "time", "seconds": 30}, headers=headers)
    assert answer(again) == ("completed", 1.0)
    assert IdempotencyRecord.all_orgs.get().response_body == {
        "status": "completed",
        "progress": 1.0,
        "remaining": None,
    }


def test_a_failed_request_is_not_remembered(api, enrolled, org, make_activity):
    activity = make_activity()
    headers = {"Idempotency-Key": "after-enrolling"}
    outsider = make_member(org)
    assert_error(report(api, outsider, activity, headers=headers), 403, "not_enrolled")
    EnrollmentFactory(course=activity.course, membership=outsider.membership)
    assert answer(report(api, outsider, activity, headers=headers)) == ("completed", 1.0)


@pytest.mark.parametrize("key, ok", [("", False), ("x" * 256, False), ("x" * 255, True)])
def test_key_length_is_1_to_255(api, enrolled, make_activity, key, ok):
    response = report(api, enrolled, make_activity(), headers={"Idempotency-Key": key})
    if ok:
        assert response.status_code == 200
    else:
        body = assert_error(response, 400, "validation_error")
        assert list(body["details"]) == ["Idempotency-Key"]
        assert not Progress.all_orgs.exists()


# --- query counts -------------------------------------------------------------------------


def test_query_count_does_not_grow_with_the_reports(
    api, enrolled, make_activity, django_assert_num_queries
):
    activity = make_activity({"type": "time", "minSeconds": 6000})
    report(api, enrolled, activity)  # the progress row exists from here on
    # token, activity + enrollment, savepoint, lock, insert reports, update (with the
    # learner's standing, learn.standing, also the enrollment's lock), release.
    with django_assert_num_queries(7 + standing_statements()):
        answer(report(api, enrolled, activity, {"type": "time", "seconds": 1}))
    with django_assert_num_queries(7 + standing_statements()):
        answer(report(api, enrolled, activity, *[{"type": "time", "seconds": 1}] * 100))


def test_query_count_of_a_first_report(api, enrolled, make_activity, django_assert_num_queries):
    activity = make_activity()
    # + insert-or-ignore of the progress row and its locking read, and the activity's funnel;
    # the activity completes its course: + the count, the course completion, its standing and
    # its completions-feed position (the organization's sequence row); and each of its two
    # events (activity.completed, course.completed) + the look-up of
    # their automations.
    with django_assert_num_queries(16 + standing_statements()):
        answer(report(api, enrolled, activity, {"type": "complete"}))


def test_query_count_with_an_idempotency_key(
    api, enrolled, make_activity, django_assert_num_queries
):
    activity = make_activity({"type": "reported"})
    report(api, enrolled, activity)
    headers = {"Idempotency-Key": "q"}
    # + the key lookup, the purge of the caller's expired keys and the stored answer, and the
    # savepoint of the write inside the transaction that stores the answer; the learner's
    # standing; the course completion's four (with its feed position); and the two events'
    # look-ups of automations.
    with django_assert_num_queries(19 + standing_statements()):
        answer(report(api, enrolled, activity, {"type": "complete"}, headers=headers))
    # A replay: token and the key lookup.
    with django_assert_num_queries(2):
        answer(report(api, enrolled, activity, {"type": "complete"}, headers=headers))


def test_schema_documents_the_operation(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/learn/progress"]["post"]
    assert {"200", "400", "401", "403", "404", "413", "415"} <= set(operation["responses"])
    headers = [p["name"] for p in operation["parameters"] if p["in"] == "header"]
    assert "Idempotency-Key" in headers


# --- the stored state is bounded ------------------------------------------------------------


def test_thousands_of_disjoint_segments_keep_the_stored_state_small(
    api, enrolled, make_activity, django_assert_max_num_queries
):
    """40 requests of 100 disjoint segments of a two-hour video (4,000 segments): the state
    holds one bit per second of the video, so its stored size is pinned by the video's length
    (7,200 s: 900 bytes of bits) and the fortieth request reads and writes what the first
    did."""
    activity = make_activity({"type": "media", "threshold": 0.99}, duration=7200)
    sizes = []
    for request in range(40):
        segments = [
            {"type": "media", "from": at, "to": at + 0.9, "duration": 7200}
            for at in (request * 1.8 * 100 + i * 1.8 for i in range(100))
        ]
        # The first request also creates the progress row and counts it in the funnel; every
        # later one costs the same.
        with django_assert_max_num_queries((10 if request == 0 else 7) + standing_statements()):
            assert report(api, enrolled, activity, *segments).status_code == 200
        sizes.append(len(json.dumps(Progress.all_orgs.get(activity=activity).state)))
    assert max(sizes) <= 1_400
    assert Progress.all_orgs.get(activity=activity).status == "in-progress"


def test_reports_after_completion_are_stored_but_not_folded(api, enrolled, make_activity):
    activity = make_activity({"type": "time", "minSeconds": 10})
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 10}))[0] == (
        "completed"
    )
    state = Progress.all_orgs.get(activity=activity).state
    assert answer(report(api, enrolled, activity, {"type": "time", "seconds": 50})) == (
        "completed",
        1.0,
    )
    assert Progress.all_orgs.get(activity=activity).state == state
    assert len(stored(activity)) == 2

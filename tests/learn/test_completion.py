"""The completion rules as pure functions over typed values: properties (hypothesis), the
contract's examples, and reading reports and settings into those values."""

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn import completion
from learn.completion import (
    COMPLETED,
    IN_PROGRESS,
    UNUSABLE,
    VIEW,
    CompleteReport,
    MediaReport,
    OtherReport,
    PageReport,
    Rule,
    ScoreReport,
    Settings,
    TimeReport,
    decide,
    fold,
)
from tests.learn.reports import INVALID_REPORTS

FAST = settings(max_examples=60, deadline=None)


def read(payloads):
    """Reports as received, read at the edge (raises on an invalid one)."""
    return [received.report for received in completion.read_reports(payloads)]


def settings_of(value):
    """An activity's settings as received, read at the edge (must be valid)."""
    settings, messages = completion.read_settings(value)
    assert messages == [], messages
    return settings


# --- strategies -----------------------------------------------------------------------------

seconds = st.one_of(
    st.integers(min_value=1, max_value=120),
    st.floats(min_value=0.001, max_value=120, allow_nan=False, allow_infinity=False),
)
time_reports = st.builds(TimeReport, seconds)


@st.composite
def media_reports(draw):
    duration = draw(st.sampled_from([60, 100, 600, 90.5]))
    start = draw(st.floats(min_value=0, max_value=duration, allow_nan=False))
    end = draw(st.floats(min_value=start, max_value=duration, allow_nan=False))
    return MediaReport(start, end, float(duration))


@st.composite
def page_reports(draw):
    pages = draw(st.integers(min_value=1, max_value=12))
    return PageReport(draw(st.integers(1, pages)), pages)


@st.composite
def score_reports(draw):
    max_score = draw(st.sampled_from([1, 10, 20, 7.5]))
    score = draw(st.floats(min_value=0, max_value=max_score, allow_nan=False))
    return ScoreReport(score, float(max_score))


other_reports = st.sampled_from([CompleteReport(), OtherReport()])
reports = st.lists(
    st.one_of(time_reports, media_reports(), page_reports(), score_reports(), other_reports),
    max_size=25,
)

fraction = st.floats(min_value=0.05, max_value=1.0, allow_nan=False)
rules = st.one_of(
    st.just(Rule("view")),
    st.just(Rule("reported")),
    st.builds(Rule, st.just("time"), st.integers(1, 600).map(float)),
    st.builds(Rule, st.sampled_from(["media", "pages", "score"]), fraction),
)


@st.composite
def activity_settings(draw, fixed_lengths=False):
    """Settings with a rule; with ``fixed_lengths`` the activity sets duration and pages."""
    duration = pages = None
    if fixed_lengths or draw(st.booleans()):
        duration = float(draw(st.sampled_from([60, 100, 600])))
    if fixed_lengths or draw(st.booleans()):
        pages = draw(st.integers(1, 12))
    return Settings(draw(rules), duration, pages)


def chunks(items, cuts):
    bounds = [0, *sorted(c % (len(items) + 1) for c in cuts), len(items)]
    return [items[a:b] for a, b in itertools.pairwise(bounds)]


# --- properties -----------------------------------------------------------------------------


@FAST
@given(activity_settings(), reports)
def test_progress_stays_within_zero_and_one(activity, batch):
    decision = decide(activity, fold(None, batch))
    assert 0.0 <= decision.progress <= 1.0
    assert decision.status in (IN_PROGRESS, COMPLETED)
    assert (decision.progress == 1.0) == (decision.status == COMPLETED)


@FAST
@given(activity_settings(), reports, st.data())
def test_order_and_split_into_requests_do_not_change_the_outcome(activity, batch, data):
    shuffled = data.draw(st.permutations(batch))
    cuts = data.draw(st.lists(st.integers(0, 100), max_size=4))
    state = None
    for request in chunks(shuffled, cuts):
        state = fold(state, request)
    at_once = fold(None, batch)
    assert (state or fold(None, [])) == at_once
    assert decide(activity, state) == decide(activity, at_once)


@FAST
@given(activity_settings(), reports, reports)
def test_a_completed_state_stays_completed(activity, first, later):
    before = decide(activity, fold(None, first))
    after = decide(activity, fold(fold(None, first), later), previous=before.status)
    if before.status == COMPLETED:
        assert after == completion.Decision(COMPLETED, 1.0)


@FAST
@given(activity_settings(fixed_lengths=True), reports, reports)
def test_with_lengths_set_by_staff_more_reports_never_undo_completion(activity, first, later):
    """The rules themselves are monotone when the activity fixes what they measure against
    (without ``previous``: the state alone keeps the completion)."""
    state = fold(None, first)
    if decide(activity, state).status == COMPLETED:
        assert decide(activity, fold(state, later)).status == COMPLETED


segment = st.tuples(st.integers(0, 60), st.integers(0, 60)).map(sorted)


@FAST
@given(st.lists(segment, max_size=20), st.integers(1, 80))
def test_media_coverage_is_the_measure_of_the_union(segments, length):
    """Against an independent oracle: integer segments cover whole unit cells."""
    cells = {i for a, b in segments for i in range(a, b) if i < length}
    batch = read([{"type": "media", "from": a, "to": b, "duration": 60} for a, b in segments])
    state = fold(None, batch)
    bits = completion.decode_watched(state["watched"])
    assert completion.watched_seconds(bits, length) == len(cells)


@FAST
@given(
    st.lists(
        st.tuples(st.floats(0, 600, allow_nan=False), st.floats(0, 600, allow_nan=False)).map(
            sorted
        ),
        max_size=20,
    )
)
def test_a_second_counts_when_a_segment_covers_its_middle(segments):
    batch = read([{"type": "media", "from": a, "to": b, "duration": 700} for a, b in segments])
    bits = completion.decode_watched(fold(None, batch)["watched"])
    oracle = {i for i in range(700) if any(a <= i + 0.5 < b for a, b in segments)}
    assert {i for i in range(700) if bits >> i & 1} == oracle


@pytest.mark.parametrize("duration", [0.3, 1, 59.5, 90.5, 90.6, 600])
def test_watching_a_whole_media_counts_it_whole(duration):
    state = fold(None, read([{"type": "media", "from": 0, "to": duration, "duration": duration}]))
    rule = {"completion": {"type": "media", "threshold": 1.0}}
    assert decide(settings_of(rule), state).status == COMPLETED


def test_the_watched_state_stays_small_whatever_the_number_of_segments():
    """A hundred thousand disjoint segments of a two-hour media: one bit per second."""
    batch = read(
        [
            {"type": "media", "from": i * 0.072, "to": i * 0.072 + 0.036, "duration": 7200}
            for i in range(100_000)
        ]
    )
    state = fold(None, batch)
    assert len(json.dumps(state)) < 7200 / 8 * 4 / 3 + 200
    again = fold(state, batch)
    assert again == state


def test_a_state_stored_as_intervals_is_read():
    legacy = {**completion.empty_state(), "duration": 100, "segments": [[0.0, 50.0]]}
    legacy.pop("watched")
    state = fold(legacy, read([{"type": "media", "from": 50, "to": 95, "duration": 100}]))
    assert "segments" not in state
    assert (
        decide(settings_of({"completion": {"type": "media", "threshold": 0.9}}), state).status
        == COMPLETED
    )


@FAST
@given(reports)
def test_state_is_json_and_survives_a_round_trip(batch):
    state = fold(None, batch)
    again = json.loads(json.dumps(state))
    assert again == state
    assert fold(again, batch) == fold(state, batch)


def wire(report):
    """A typed report as a client sends it."""
    match report:
        case TimeReport(seconds):
            return {"type": "time", "seconds": seconds}
        case MediaReport(start, end, duration):
            return {"type": "media", "from": start, "to": end, "duration": duration}
        case PageReport(page, pages):
            return {"type": "page", "page": page, "pages": pages}
        case ScoreReport(score, max_score):
            return {"type": "score", "score": score, "maxScore": max_score}
        case CompleteReport():
            return {"type": "complete"}
    return {"type": "bookmark", "at": 3}


@FAST
@given(reports)
def test_a_report_reads_back_as_the_value_it_was_sent_as(batch):
    received = completion.read_reports([wire(report) for report in batch])
    assert [r.report for r in received] == batch
    assert [r.payload for r in received] == [wire(report) for report in batch]


# --- the contract's examples --------------------------------------------------------------


def test_twenty_of_sixty_seconds_is_a_third():
    state = fold(None, read([{"type": "time", "seconds": 20}]))
    assert decide(settings_of({"completion": {"type": "time", "minSeconds": 60}}), state) == (
        completion.Decision(IN_PROGRESS, 0.333)
    )


def test_45_percent_of_a_video_against_a_90_percent_threshold_is_a_half():
    state = fold(None, read([{"type": "media", "from": 0, "to": 270, "duration": 600}]))
    decision = decide(settings_of({"completion": {"type": "media", "threshold": 0.9}}), state)
    assert decision == completion.Decision(IN_PROGRESS, 0.5)


def test_overlapping_segments_count_once():
    batch = [
        {"type": "media", "from": 0, "to": 300, "duration": 600},
        {"type": "media", "from": 200, "to": 500, "duration": 600},
        {"type": "media", "from": 0, "to": 300, "duration": 600},
    ]
    state = fold(None, read(batch))
    assert completion.watched_seconds(completion.decode_watched(state["watched"]), 600) == 500
    rule = {"completion": {"type": "media", "threshold": 0.9}}
    assert decide(settings_of(rule), state).progress == round(500 / 540, 3)
    done = fold(state, read([{"type": "media", "from": 500, "to": 540, "duration": 600}]))
    assert decide(settings_of(rule), done).status == COMPLETED


def test_the_activity_duration_wins_over_the_reported_one():
    state = fold(None, read([{"type": "media", "from": 0, "to": 95, "duration": 100}]))
    rule = {"type": "media", "threshold": 0.9}
    assert decide(settings_of({"completion": rule}), state).status == COMPLETED
    assert decide(settings_of({"completion": rule, "duration": 1000}), state).progress == round(
        95 / 900, 3
    )


def test_without_a_set_length_the_largest_reported_one_counts():
    state = fold(
        None,
        read(
            [
                {"type": "page", "page": 1, "pages": 4},
                {"type": "page", "page": 2, "pages": 8},
            ]
        ),
    )
    assert (
        decide(settings_of({"completion": {"type": "pages", "threshold": 1.0}}), state).progress
        == 0.25
    )


def test_distinct_pages_count_and_pages_beyond_the_document_do_not():
    batch = read([{"type": "page", "page": p, "pages": 12} for p in (1, 1, 2, 2, 3, 11, 12)])
    rule = {"completion": {"type": "pages", "threshold": 1.0}, "pages": 10}
    assert decide(settings_of(rule), fold(None, batch)).progress == 0.3


def test_pages_threshold_rounding_does_not_ask_for_an_extra_page():
    batch = read([{"type": "page", "page": p, "pages": 10} for p in range(1, 8)])
    rule = {"completion": {"type": "pages", "threshold": 0.7}, "pages": 10}
    assert decide(settings_of(rule), fold(None, batch)).status == COMPLETED


def test_best_score_counts():
    batch = read(
        [
            {"type": "score", "score": 9, "maxScore": 10},
            {"type": "score", "score": 2, "maxScore": 10},
        ]
    )
    rule = {"completion": {"type": "score", "passingScore": 0.7}}
    assert decide(settings_of(rule), fold(None, batch[1:])).progress == round(0.2 / 0.7, 3)
    assert decide(settings_of(rule), fold(None, batch)).status == COMPLETED


@pytest.mark.parametrize("rule", [{"type": "view"}, {"type": "reported"}, None])
def test_view_and_reported_are_zero_until_complete(rule):
    activity = {"completion": rule} if rule else None
    assert decide(settings_of(activity), fold(None, [])) == completion.Decision(IN_PROGRESS, 0.0)


def test_view_completes_on_any_known_report_and_reported_only_on_complete():
    time_only = fold(None, read([{"type": "time", "seconds": 1}]))
    assert decide(settings_of(None), time_only).status == COMPLETED
    assert (
        decide(settings_of({"completion": {"type": "reported"}}), time_only).status == IN_PROGRESS
    )
    done = fold(time_only, read([{"type": "complete"}]))
    assert decide(settings_of({"completion": {"type": "reported"}}), done).status == COMPLETED


def test_unknown_report_types_are_ignored():
    state = fold(None, read([{"type": "bookmark", "page": 3}]))
    assert state == completion.empty_state()
    assert decide(settings_of(None), state).status == IN_PROGRESS


def test_progress_just_short_of_completion_is_below_one():
    state = fold(None, read([{"type": "time", "seconds": 59.99}]))
    assert (
        decide(settings_of({"completion": {"type": "time", "minSeconds": 60}}), state).progress
        == 0.999
    )


def test_a_rule_stored_around_validation_never_completes():
    state = fold(None, read([{"type": "complete"}]))
    stored, messages = completion.read_settings({"completion": {"type": "magic"}})
    assert messages and stored.rule == UNUSABLE
    assert decide(stored, state).status == IN_PROGRESS


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "report, field", [*INVALID_REPORTS, ({"type": "time", "seconds": 1e400}, "seconds")]
)
def test_invalid_reports_name_the_field(report, field):
    with pytest.raises(completion.Invalid) as invalid:
        completion.read_report(report)
    assert field in invalid.value.errors


@pytest.mark.parametrize(
    "report",
    [
        {"type": "time", "seconds": 86400},
        {"type": "media", "from": 0, "to": 0, "duration": 1},
        {"type": "page", "page": 10, "pages": 10},
        {"type": "score", "score": 0, "maxScore": 0.5},
        {"type": "complete", "extra": {"kept": True}},
        {"type": "something-new", "anything": [1, 2]},
        # Any JSON object is a report (CONTRACT 4.3): without a string type it is ignored.
        {"type": ""},
        {"type": 3},
        {"seconds": 3},
        {"type": "x" * 101},
    ],
)
def test_valid_reports(report):
    completion.read_report(report)


def test_reports_read_into_typed_values_and_invalid_ones_by_position():
    payloads = [
        {"type": "media", "from": 0, "to": 5, "duration": 60},
        {"type": "page", "page": 2, "pages": 3},
        {"type": "score", "score": 3, "maxScore": 4},
        {"type": "time", "seconds": 7},
        {"type": "complete", "extra": 1},
        {"type": "something-new"},
    ]
    assert read(payloads) == [
        MediaReport(0.0, 5.0, 60.0),
        PageReport(2, 3),
        ScoreReport(3.0, 4.0),
        TimeReport(7.0),
        CompleteReport(),
        OtherReport(),
    ]
    with pytest.raises(completion.Invalid) as invalid:
        completion.read_reports([payloads[0], {"type": "time"}, [1], {"type": "page"}])
    assert invalid.value.errors == {
        1: {"seconds": [completion.SECONDS.message]},
        2: ["Each report must be a JSON object."],
        3: {"pages": [completion.PAGES.message], "page": [completion.PAGE.message]},
    }


@pytest.mark.parametrize(
    "value",
    [
        {"completion": {"type": "view"}},
        {"completion": {"type": "time", "minSeconds": 300}},
        {"completion": {"type": "media", "threshold": 0.9}, "duration": 600},
        {"completion": {"type": "pages", "threshold": 1.0}, "pages": 10},
        {"completion": {"type": "score", "passingScore": 0.7}},
        {"completion": {"type": "reported"}},
        {"completion": None, "anything": "else"},
        None,
        [1, 2],
    ],
)
def test_valid_settings(value):
    assert completion.read_settings(value)[1] == []


def test_settings_read_into_typed_values():
    value = {"completion": {"type": "media", "threshold": 0.9}, "duration": 600, "pages": 4}
    assert settings_of(value) == Settings(Rule("media", 0.9), 600.0, 4)
    assert settings_of(None) == settings_of([1]) == Settings(VIEW, None, None)
    assert settings_of({"completion": {"type": "time", "minSeconds": 5}}).rule == Rule("time", 5.0)


def test_a_wrong_part_of_stored_settings_reads_as_unset_and_the_rest_counts():
    stored, messages = completion.read_settings(
        {"completion": {"type": "pages", "threshold": 1.0}, "duration": -1, "pages": 0}
    )
    assert stored == Settings(Rule("pages", 1.0), None, None)
    assert len(messages) == 2


@pytest.mark.parametrize(
    "value, fragment",
    [
        ({"completion": {"type": "magic"}}, "Unknown completion rule type"),
        ({"completion": "view"}, "must be a JSON object"),
        ({"completion": {"type": "time"}}, "minSeconds"),
        ({"completion": {"type": "time", "minSeconds": 0}}, "minSeconds"),
        ({"completion": {"type": "media", "threshold": 1.5}}, "threshold"),
        ({"completion": {"type": "pages", "threshold": 0}}, "threshold"),
        ({"completion": {"type": "score", "passingScore": "0.7"}}, "passingScore"),
        ({"completion": {"type": "view", "minSeconds": 3}}, "Unknown key"),
        ({"completion": {"type": ["view"]}}, "Unknown completion rule type"),
        ({"duration": -1}, "duration"),
        ({"pages": 2.5}, "pages"),
    ],
)
def test_invalid_settings_are_explained(value, fragment):
    stored, messages = completion.read_settings(value)
    assert messages and any(fragment in m for m in messages), messages
    assert stored.rule == (UNUSABLE if "completion" in value else VIEW)


# --- what remains (8.5) ---------------------------------------------------------------------


def after_each_request(activity, batch, cuts):
    """The reports split into requests, each folded in as a progress request folds it (which
    opens the activity), the status latching as the service keeps it: after each request,
    its status and what remains."""
    state, status, seen = None, None, []
    for request in chunks(batch, cuts):
        state = completion.visit(state, request)
        status = decide(activity, state, previous=status).status
        seen.append((status, completion.remaining(activity, state, status)))
    return seen


@FAST
@given(activity_settings(), reports, st.lists(st.integers(0, 100), max_size=4))
def test_remaining_is_null_exactly_when_completed(activity, batch, cuts):
    for status, left in after_each_request(activity, batch, cuts):
        assert (left is None) == (status == COMPLETED)
    # Before any report too: not started, something remains.
    assert completion.remaining(activity, None, completion.NOT_STARTED) is not None


@FAST
@given(activity_settings(), reports)
def test_a_rule_not_met_has_at_least_one_unit_left(activity, batch):
    """Measured as decide measures: 0 left would be completed, so a known amount is >= 1."""
    state = completion.visit(None, batch)
    status = decide(activity, state).status
    left = completion.remaining(activity, state, status)
    for key in ("seconds", "pages"):
        if left is not None and left.get(key) is not None:
            assert left[key] >= 1


def assert_not_grown(before, after):
    if before is None:
        assert after is None  # completion latches
        return
    if after is None:
        return
    assert set(after) == set(before)
    for key in ("seconds", "pages"):
        if key in before and before[key] is not None:
            assert after[key] is not None and after[key] <= before[key]
    if "best" in before:
        assert after["passingScore"] == before["passingScore"]
        assert before["best"] is None or after["best"] >= before["best"]
    for key in ("open", "report"):
        if key in before:
            assert after[key] == before[key]


@FAST
@given(activity_settings(fixed_lengths=True), reports, st.lists(st.integers(0, 100), max_size=4))
def test_remaining_never_grows_as_reports_arrive(activity, batch, cuts):
    before = completion.remaining(activity, None, completion.NOT_STARTED)
    for _, left in after_each_request(activity, batch, cuts):
        assert_not_grown(before, left)
        before = left


@st.composite
def one_document(draw):
    """Reports of one media and one document, whose lengths every report states alike."""
    duration = float(draw(st.sampled_from([60, 90.5, 600])))
    pages = draw(st.integers(1, 12))

    def segment(bounds):
        start, end = sorted(bounds)
        return MediaReport(start, end, duration)

    position = st.floats(min_value=0, max_value=duration, allow_nan=False)
    return draw(
        st.lists(
            st.one_of(
                time_reports,
                st.tuples(position, position).map(segment),
                st.integers(1, pages).map(lambda page: PageReport(page, pages)),
                score_reports(),
                other_reports,
            ),
            max_size=25,
        )
    )


@FAST
@given(activity_settings(), one_document(), st.lists(st.integers(0, 100), max_size=4))
def test_remaining_never_grows_when_the_reports_agree_on_the_lengths(activity, batch, cuts):
    """Without lengths set by staff, the reported ones count: while they do not change, what
    remains does not grow either (a media with no duration known yet has seconds: null)."""
    before = completion.remaining(activity, None, completion.NOT_STARTED)
    for _, left in after_each_request(activity, batch, cuts):
        assert_not_grown(before, left)
        before = left


@FAST
@given(activity_settings(), reports, st.data())
def test_remaining_depends_on_the_reports_not_their_order(activity, batch, data):
    shuffled = data.draw(st.permutations(batch))
    status = decide(activity, fold(None, batch)).status
    assert completion.remaining(activity, fold(None, shuffled), status) == (
        completion.remaining(activity, fold(None, batch), status)
    )


def left_after(rule_settings, payloads, *, status=None):
    """What remains after one progress request with ``payloads``, as 4.3 answers it."""
    activity = settings_of(rule_settings)
    state = completion.visit(None, read(payloads))
    return completion.remaining(activity, state, status or decide(activity, state).status)


NOTHING_YET = fold(None, [])


@pytest.mark.parametrize(
    "rule_settings, expected",
    [
        (None, {"open": True}),
        ({"completion": {"type": "view"}}, {"open": True}),
        ({"completion": {"type": "time", "minSeconds": 60}}, {"seconds": 60}),
        ({"completion": {"type": "time", "minSeconds": 60.5}}, {"seconds": 61}),
        ({"completion": {"type": "media", "threshold": 0.9}, "duration": 600}, {"seconds": 540}),
        ({"completion": {"type": "media", "threshold": 0.9}}, {"seconds": None}),
        ({"completion": {"type": "pages", "threshold": 1.0}, "pages": 10}, {"pages": 10}),
        ({"completion": {"type": "pages", "threshold": 0.5}, "pages": 5}, {"pages": 3}),
        ({"completion": {"type": "pages", "threshold": 1.0}}, {"pages": None}),
        (
            {"completion": {"type": "score", "passingScore": 0.7}},
            {"passingScore": 0.7, "best": None},
        ),
        ({"completion": {"type": "reported"}}, {"report": "complete"}),
    ],
)
def test_before_any_report_the_whole_rule_remains(rule_settings, expected):
    activity = settings_of(rule_settings)
    assert completion.remaining(activity, NOTHING_YET, completion.NOT_STARTED) == expected
    assert completion.remaining(activity, None, completion.NOT_STARTED) == expected


def test_view_remains_open_until_any_request_opens_it():
    assert left_after(None, []) is None
    assert left_after({"completion": {"type": "view"}}, [{"type": "bookmark"}]) is None


def test_time_remaining_is_min_seconds_less_the_summed_time_rounded_up():
    rule = {"completion": {"type": "time", "minSeconds": 60}}
    assert left_after(rule, [{"type": "time", "seconds": 20}]) == {"seconds": 40}
    assert left_after(rule, [{"type": "time", "seconds": 20.5}]) == {"seconds": 40}
    assert left_after(rule, [{"type": "time", "seconds": 59.99}]) == {"seconds": 1}
    assert left_after(rule, [{"type": "time", "seconds": 60}]) is None


def test_media_remaining_is_what_is_still_to_watch_to_reach_the_threshold():
    rule = {"completion": {"type": "media", "threshold": 0.9}, "duration": 600}
    watched = [{"type": "media", "from": 0, "to": 270, "duration": 600}]
    assert left_after(rule, watched) == {"seconds": 270}
    overlapping = [*watched, {"type": "media", "from": 200, "to": 500, "duration": 600}]
    assert left_after(rule, overlapping) == {"seconds": 40}  # 200-270 counts once
    assert left_after(rule, [*overlapping, {**watched[0], "from": 500, "to": 540}]) is None


def test_media_remaining_without_a_set_duration_uses_the_largest_reported():
    rule = {"completion": {"type": "media", "threshold": 0.9}}
    assert left_after(rule, [{"type": "time", "seconds": 5}]) == {"seconds": None}
    watched = [{"type": "media", "from": 0, "to": 5, "duration": 100}]
    assert left_after(rule, watched) == {"seconds": 85}


def test_pages_remaining_counts_distinct_pages_still_to_view():
    rule = {"completion": {"type": "pages", "threshold": 1.0}, "pages": 10}
    seen = [{"type": "page", "page": p, "pages": 10} for p in (1, 2, 2, 3)]
    assert left_after(rule, seen) == {"pages": 7}
    assert left_after({"completion": rule["completion"]}, seen[:1]) == {"pages": 9}
    assert left_after({"completion": rule["completion"]}, [{"type": "complete"}]) == {"pages": None}


def test_a_threshold_of_float_noise_asks_for_no_extra_page():
    """0.7 x 10 is 7.000000000000001: six pages seen leave one, not two."""
    rule = {"completion": {"type": "pages", "threshold": 0.7}, "pages": 10}
    seen = [{"type": "page", "page": p, "pages": 10} for p in range(1, 7)]
    assert left_after(rule, seen) == {"pages": 1}
    assert left_after(rule, [*seen, {"type": "page", "page": 7, "pages": 10}]) is None


def test_score_remaining_is_the_passing_score_and_the_best_so_far():
    rule = {"completion": {"type": "score", "passingScore": 0.7}}
    scores = [
        {"type": "score", "score": 5, "maxScore": 10},
        {"type": "score", "score": 2, "maxScore": 4},
    ]
    assert left_after(rule, scores) == {"passingScore": 0.7, "best": 0.5}
    assert left_after(rule, [{"type": "time", "seconds": 3}]) == {"passingScore": 0.7, "best": None}
    assert left_after(rule, [{"type": "score", "score": 7, "maxScore": 10}]) is None


def test_reported_remaining_is_a_complete_report():
    rule = {"completion": {"type": "reported"}}
    assert left_after(rule, [{"type": "time", "seconds": 30}]) == {"report": "complete"}
    assert left_after(rule, [{"type": "complete"}]) is None


def test_a_completed_status_has_nothing_remaining_whatever_the_state():
    """Completion latches: a stricter rule set later does not bring anything back."""
    stricter = {"completion": {"type": "time", "minSeconds": 600}}
    assert left_after(stricter, [], status=COMPLETED) is None


def test_a_rule_stored_around_validation_has_nothing_a_learner_could_do():
    stored, _ = completion.read_settings({"completion": {"type": "magic"}})
    assert completion.remaining(stored, fold(None, []), IN_PROGRESS) == {}

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
        2: {"nonFieldErrors": ["Each report must be a JSON object."]},
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

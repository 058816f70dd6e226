"""The completion rules as pure functions: properties (hypothesis) and the contract's examples."""

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn import completion
from learn.completion import COMPLETED, IN_PROGRESS, decide, fold

FAST = settings(max_examples=60, deadline=None)

# --- strategies -----------------------------------------------------------------------------

seconds = st.one_of(
    st.integers(min_value=1, max_value=120),
    st.floats(min_value=0.001, max_value=120, allow_nan=False, allow_infinity=False),
)
time_reports = st.builds(lambda s: {"type": "time", "seconds": s}, seconds)


@st.composite
def media_reports(draw):
    duration = draw(st.sampled_from([60, 100, 600, 90.5]))
    start = draw(st.floats(min_value=0, max_value=duration, allow_nan=False))
    end = draw(st.floats(min_value=start, max_value=duration, allow_nan=False))
    return {"type": "media", "from": start, "to": end, "duration": duration}


@st.composite
def page_reports(draw):
    pages = draw(st.integers(min_value=1, max_value=12))
    return {"type": "page", "page": draw(st.integers(1, pages)), "pages": pages}


@st.composite
def score_reports(draw):
    max_score = draw(st.sampled_from([1, 10, 20, 7.5]))
    score = draw(st.floats(min_value=0, max_value=max_score, allow_nan=False))
    return {"type": "score", "score": score, "maxScore": max_score}


other_reports = st.sampled_from(
    [{"type": "complete"}, {"type": "bookmark", "at": 3}, {"type": "time", "seconds": -1}]
)
reports = st.lists(
    st.one_of(time_reports, media_reports(), page_reports(), score_reports(), other_reports),
    max_size=25,
)

fraction = st.floats(min_value=0.05, max_value=1.0, allow_nan=False)
rules = st.one_of(
    st.just({"type": "view"}),
    st.just({"type": "reported"}),
    st.builds(lambda s: {"type": "time", "minSeconds": s}, st.integers(1, 600)),
    st.builds(lambda t: {"type": "media", "threshold": t}, fraction),
    st.builds(lambda t: {"type": "pages", "threshold": t}, fraction),
    st.builds(lambda t: {"type": "score", "passingScore": t}, fraction),
)


@st.composite
def activity_settings(draw, fixed_lengths=False):
    """Settings with a rule; with ``fixed_lengths`` the activity sets duration and pages."""
    value = {"completion": draw(rules)}
    if fixed_lengths or draw(st.booleans()):
        value["duration"] = draw(st.sampled_from([60, 100, 600]))
    if fixed_lengths or draw(st.booleans()):
        value["pages"] = draw(st.integers(1, 12))
    return value


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
    batch = [{"type": "media", "from": a, "to": b, "duration": 60} for a, b in segments]
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
    batch = [{"type": "media", "from": a, "to": b, "duration": 700} for a, b in segments]
    bits = completion.decode_watched(fold(None, batch)["watched"])
    oracle = {i for i in range(700) if any(a <= i + 0.5 < b for a, b in segments)}
    assert {i for i in range(700) if bits >> i & 1} == oracle


@pytest.mark.parametrize("duration", [0.3, 1, 59.5, 90.5, 90.6, 600])
def test_watching_a_whole_media_counts_it_whole(duration):
    state = fold(None, [{"type": "media", "from": 0, "to": duration, "duration": duration}])
    rule = {"completion": {"type": "media", "threshold": 1.0}}
    assert decide(rule, state).status == COMPLETED


def test_the_watched_state_stays_small_whatever_the_number_of_segments():
    """A hundred thousand disjoint segments of a two-hour media: one bit per second."""
    batch = [
        {"type": "media", "from": i * 0.072, "to": i * 0.072 + 0.036, "duration": 7200}
        for i in range(100_000)
    ]
    state = fold(None, batch)
    assert len(json.dumps(state)) < 7200 / 8 * 4 / 3 + 200
    again = fold(state, batch)
    assert again == state


def test_a_state_stored_as_intervals_is_read():
    legacy = {**completion.empty_state(), "duration": 100, "segments": [[0.0, 50.0]]}
    legacy.pop("watched")
    state = fold(legacy, [{"type": "media", "from": 50, "to": 95, "duration": 100}])
    assert "segments" not in state
    assert decide({"completion": {"type": "media", "threshold": 0.9}}, state).status == COMPLETED


@FAST
@given(reports)
def test_state_is_json_and_survives_a_round_trip(batch):
    state = fold(None, batch)
    again = json.loads(json.dumps(state))
    assert again == state
    assert fold(again, batch) == fold(state, batch)


@FAST
@given(st.one_of(time_reports, media_reports(), page_reports(), score_reports()))
def test_generated_reports_of_known_types_are_valid(report):
    assert completion.validate_report(report) == {}


# --- the contract's examples --------------------------------------------------------------


def test_twenty_of_sixty_seconds_is_a_third():
    state = fold(None, [{"type": "time", "seconds": 20}])
    assert decide({"completion": {"type": "time", "minSeconds": 60}}, state) == (
        completion.Decision(IN_PROGRESS, 0.333)
    )


def test_45_percent_of_a_video_against_a_90_percent_threshold_is_a_half():
    state = fold(None, [{"type": "media", "from": 0, "to": 270, "duration": 600}])
    decision = decide({"completion": {"type": "media", "threshold": 0.9}}, state)
    assert decision == completion.Decision(IN_PROGRESS, 0.5)


def test_overlapping_segments_count_once():
    batch = [
        {"type": "media", "from": 0, "to": 300, "duration": 600},
        {"type": "media", "from": 200, "to": 500, "duration": 600},
        {"type": "media", "from": 0, "to": 300, "duration": 600},
    ]
    state = fold(None, batch)
    assert completion.watched_seconds(completion.decode_watched(state["watched"]), 600) == 500
    rule = {"completion": {"type": "media", "threshold": 0.9}}
    assert decide(rule, state).progress == round(500 / 540, 3)
    done = fold(state, [{"type": "media", "from": 500, "to": 540, "duration": 600}])
    assert decide(rule, done).status == COMPLETED


def test_the_activity_duration_wins_over_the_reported_one():
    state = fold(None, [{"type": "media", "from": 0, "to": 95, "duration": 100}])
    rule = {"type": "media", "threshold": 0.9}
    assert decide({"completion": rule}, state).status == COMPLETED
    assert decide({"completion": rule, "duration": 1000}, state).progress == round(95 / 900, 3)


def test_without_a_set_length_the_largest_reported_one_counts():
    state = fold(
        None,
        [
            {"type": "page", "page": 1, "pages": 4},
            {"type": "page", "page": 2, "pages": 8},
        ],
    )
    assert decide({"completion": {"type": "pages", "threshold": 1.0}}, state).progress == 0.25


def test_distinct_pages_count_and_pages_beyond_the_document_do_not():
    batch = [{"type": "page", "page": p, "pages": 12} for p in (1, 1, 2, 2, 3, 11, 12)]
    rule = {"completion": {"type": "pages", "threshold": 1.0}, "pages": 10}
    assert decide(rule, fold(None, batch)).progress == 0.3


def test_pages_threshold_rounding_does_not_ask_for_an_extra_page():
    batch = [{"type": "page", "page": p, "pages": 10} for p in range(1, 8)]
    rule = {"completion": {"type": "pages", "threshold": 0.7}, "pages": 10}
    assert decide(rule, fold(None, batch)).status == COMPLETED


def test_best_score_counts():
    batch = [
        {"type": "score", "score": 9, "maxScore": 10},
        {"type": "score", "score": 2, "maxScore": 10},
    ]
    rule = {"completion": {"type": "score", "passingScore": 0.7}}
    assert decide(rule, fold(None, batch[1:])).progress == round(0.2 / 0.7, 3)
    assert decide(rule, fold(None, batch)).status == COMPLETED


@pytest.mark.parametrize("rule", [{"type": "view"}, {"type": "reported"}, None])
def test_view_and_reported_are_zero_until_complete(rule):
    activity = {"completion": rule} if rule else None
    assert decide(activity, fold(None, [])) == completion.Decision(IN_PROGRESS, 0.0)


def test_view_completes_on_any_known_report_and_reported_only_on_complete():
    time_only = fold(None, [{"type": "time", "seconds": 1}])
    assert decide(None, time_only).status == COMPLETED
    assert decide({"completion": {"type": "reported"}}, time_only).status == IN_PROGRESS
    done = fold(time_only, [{"type": "complete"}])
    assert decide({"completion": {"type": "reported"}}, done).status == COMPLETED


def test_unknown_report_types_are_ignored():
    state = fold(None, [{"type": "bookmark", "page": 3}])
    assert state == completion.empty_state()
    assert decide(None, state).status == IN_PROGRESS


def test_progress_just_short_of_completion_is_below_one():
    state = fold(None, [{"type": "time", "seconds": 59.99}])
    assert decide({"completion": {"type": "time", "minSeconds": 60}}, state).progress == 0.999


def test_a_rule_stored_around_validation_never_completes():
    state = fold(None, [{"type": "complete"}])
    assert decide({"completion": {"type": "magic"}}, state).status == IN_PROGRESS


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "report, field",
    [
        ({"type": "time", "seconds": 0}, "seconds"),
        ({"type": "time", "seconds": -5}, "seconds"),
        ({"type": "time", "seconds": 86401}, "seconds"),
        ({"type": "time", "seconds": "30"}, "seconds"),
        ({"type": "time", "seconds": True}, "seconds"),
        ({"type": "time", "seconds": 1e400}, "seconds"),
        ({"type": "time"}, "seconds"),
        ({"type": "media", "from": 10, "to": 5, "duration": 60}, "to"),
        ({"type": "media", "from": -1, "to": 5, "duration": 60}, "from"),
        ({"type": "media", "from": 0, "to": 61, "duration": 60}, "to"),
        ({"type": "media", "from": 0, "to": 5, "duration": 0}, "duration"),
        ({"type": "media", "from": 0, "to": 5}, "duration"),
        ({"type": "page", "page": 0, "pages": 10}, "page"),
        ({"type": "page", "page": 11, "pages": 10}, "page"),
        ({"type": "page", "page": 2.5, "pages": 10}, "page"),
        ({"type": "page", "page": 1, "pages": 0}, "pages"),
        ({"type": "page", "page": 1, "pages": 10_001}, "pages"),
        ({"type": "score", "score": 11, "maxScore": 10}, "score"),
        ({"type": "score", "score": -1, "maxScore": 10}, "score"),
        ({"type": "score", "score": 0, "maxScore": 0}, "maxScore"),
    ],
)
def test_invalid_reports_name_the_field(report, field):
    assert field in completion.validate_report(report)


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
    assert completion.validate_report(report) == {}


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
    assert completion.validate_settings(value) == []


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
        ({"duration": -1}, "duration"),
        ({"pages": 2.5}, "pages"),
    ],
)
def test_invalid_settings_are_explained(value, fragment):
    messages = completion.validate_settings(value)
    assert messages and any(fragment in m for m in messages), messages

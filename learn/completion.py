"""The completion rules: pure functions, no Django, property-tested.

A learner's reports are folded into an *aggregate state* (a small JSON object) and a rule is
evaluated over that state and the activity's settings. Invariants:

- ``fold`` is a commutative monoid action: the state after a set of reports does not depend
  on their order nor on how they were split into requests (seconds are summed as integer
  microseconds, watched media is a set of seconds, pages a sorted set, the rest are maxima
  and flags).
- The state's size does not grow with the number of reports: watched media is a bitmap with
  one bit per second of the media (at most ``MAX_MEDIA_DURATION`` bits), pages are bounded
  by ``MAX_PAGES``; so a request costs the same after a million reports as after the first.
- ``decide`` never answers a progress outside [0, 1], answers 1.0 exactly when completed and
  never regresses from a previous ``completed``.
- Only valid reports of known types count; anything else is ignored here (the caller stores
  it anyway).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

NOT_STARTED = "not-started"
IN_PROGRESS = "in-progress"
COMPLETED = "completed"

REPORT_TYPES = ("time", "media", "page", "score", "complete")
RULE_TYPES = ("view", "time", "media", "pages", "score", "reported")
DEFAULT_RULE: dict[str, Any] = {"type": "view"}

MAX_SECONDS_PER_REPORT = 86_400
# Bounds the contract leaves open (see docs/api.md): a week of media, ten thousand pages.
MAX_MEDIA_DURATION = 604_800
MAX_PAGES = 10_000
# Progress is answered to three decimals, as in the contract's examples (20 of 60 s: 0.333).
PROGRESS_DECIMALS = 3
# Float slack when comparing a measure with a threshold (0.7 x 10 is 7.000000000000001).
_EPSILON = 1e-9
_MICROS = 1_000_000

Errors = dict[str, list[str]]


# --- numbers ------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    """A finite JSON number as a float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _integer(value: Any) -> int | None:
    """A JSON whole number (not a boolean, not 3.0)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


# --- reports ------------------------------------------------------------------------------


def report_type(report: Any) -> str | None:
    if isinstance(report, Mapping) and isinstance(report.get("type"), str):
        return report["type"]
    return None


def validate_report(report: Any) -> Errors:
    """Errors of one report, keyed by its field names; empty when it may be stored.

    Any JSON object may be stored (the interface's reports carry arbitrary keys); one without
    a string ``type``, or with a type the server does not know, is stored and ignored. Only
    reports of a known type must also carry valid values.
    """
    if not isinstance(report, Mapping):
        return {"nonFieldErrors": ["Each report must be a JSON object."]}
    check = _REPORT_CHECKS.get(report_type(report))
    return check(report) if check else {}


def validate_reports(reports: Iterable[Any]) -> dict[int, Errors]:
    """Errors of each invalid report by its position; empty when all may be stored."""
    errors: dict[int, Errors] = {}
    for index, report in enumerate(reports):
        found = validate_report(report)
        if found:
            errors[index] = found
    return errors


def _check_time(report: Mapping) -> Errors:
    seconds = _number(report.get("seconds"))
    if seconds is None or not 0 < seconds <= MAX_SECONDS_PER_REPORT:
        return {
            "seconds": [f"Must be a number greater than 0 and at most {MAX_SECONDS_PER_REPORT}."]
        }
    return {}


def _check_media(report: Mapping) -> Errors:
    errors: Errors = {}
    start, end = _number(report.get("from")), _number(report.get("to"))
    duration = _number(report.get("duration"))
    if duration is None or not 0 < duration <= MAX_MEDIA_DURATION:
        errors["duration"] = [
            f"Must be a number of seconds greater than 0 and at most {MAX_MEDIA_DURATION}."
        ]
    if start is None or start < 0:
        errors["from"] = ["Must be a number of seconds, at least 0."]
    if end is None:
        errors["to"] = ["Must be a number of seconds."]
    elif start is not None and end < start:
        errors["to"] = ["Must not be less than from."]
    elif duration is not None and "duration" not in errors and end > duration:
        errors["to"] = ["Must not be greater than duration."]
    return errors


def _check_page(report: Mapping) -> Errors:
    errors: Errors = {}
    page, pages = _integer(report.get("page")), _integer(report.get("pages"))
    if pages is None or not 1 <= pages <= MAX_PAGES:
        errors["pages"] = [f"Must be a whole number from 1 to {MAX_PAGES}."]
    if page is None or page < 1:
        errors["page"] = ["Must be a whole number, at least 1."]
    elif pages is not None and "pages" not in errors and page > pages:
        errors["page"] = ["Must not be greater than pages."]
    return errors


def _check_score(report: Mapping) -> Errors:
    errors: Errors = {}
    score, max_score = _number(report.get("score")), _number(report.get("maxScore"))
    if max_score is None or max_score <= 0:
        errors["maxScore"] = ["Must be a number greater than 0."]
    if score is None or score < 0:
        errors["score"] = ["Must be a number, at least 0."]
    elif max_score is not None and "maxScore" not in errors and score > max_score:
        errors["score"] = ["Must not be greater than maxScore."]
    return errors


_REPORT_CHECKS = {
    "time": _check_time,
    "media": _check_media,
    "page": _check_page,
    "score": _check_score,
    "complete": lambda report: {},
}


# --- rules and settings -------------------------------------------------------------------


def _check_threshold(rule: Mapping, key: str) -> Errors:
    value = _number(rule.get(key))
    if value is None or not 0 < value <= 1:
        return {key: ["Must be a number greater than 0 and at most 1."]}
    return {}


def _check_min_seconds(rule: Mapping) -> Errors:
    value = _number(rule.get("minSeconds"))
    if value is None or value <= 0:
        return {"minSeconds": ["Must be a number of seconds greater than 0."]}
    return {}


# rule type -> (its keys besides "type", its check)
_RULE_SHAPES: dict[str, tuple[tuple[str, ...], Any]] = {
    "view": ((), lambda rule: {}),
    "reported": ((), lambda rule: {}),
    "time": (("minSeconds",), _check_min_seconds),
    "media": (("threshold",), lambda rule: _check_threshold(rule, "threshold")),
    "pages": (("threshold",), lambda rule: _check_threshold(rule, "threshold")),
    "score": (("passingScore",), lambda rule: _check_threshold(rule, "passingScore")),
}


def validate_rule(rule: Any) -> list[str]:
    """Human messages of what is wrong with a completion rule; empty when it is valid."""
    if not isinstance(rule, Mapping):
        return ['A completion rule must be a JSON object such as {"type": "view"}.']
    kind = rule.get("type")
    if kind not in _RULE_SHAPES:
        return [f"Unknown completion rule type {kind!r}; expected one of: {', '.join(RULE_TYPES)}."]
    keys, check = _RULE_SHAPES[kind]
    messages = [f"{key}: {message}" for key, found in check(rule).items() for message in found]
    unknown = sorted(set(rule) - {"type", *keys})
    if unknown:
        allowed = ", ".join(keys) if keys else "no other key"
        messages.append(
            f"Unknown key(s) in a {kind} rule: {', '.join(unknown)} (allowed: {allowed})."
        )
    return messages


def validate_settings(settings: Any) -> list[str]:
    """Human messages of what is wrong with an activity's settings; empty when valid.

    Settings may be any JSON value; when it is an object, ``completion`` must be a valid
    rule, ``duration`` a positive number of seconds and ``pages`` a page count.
    """
    if not isinstance(settings, Mapping):
        return []
    messages: list[str] = []
    if settings.get("completion") is not None:
        messages += [f"completion: {m}" for m in validate_rule(settings["completion"])]
    if settings.get("duration") is not None:
        duration = _number(settings["duration"])
        if duration is None or not 0 < duration <= MAX_MEDIA_DURATION:
            messages.append(
                f"duration: Must be a number of seconds greater than 0 and at most "
                f"{MAX_MEDIA_DURATION}."
            )
    if settings.get("pages") is not None:
        pages = _integer(settings["pages"])
        if pages is None or not 1 <= pages <= MAX_PAGES:
            messages.append(f"pages: Must be a whole number from 1 to {MAX_PAGES}.")
    return messages


def rule_of(settings: Any) -> dict[str, Any]:
    """The activity's completion rule (``view`` when none is set)."""
    if isinstance(settings, Mapping) and settings.get("completion") is not None:
        return dict(settings["completion"])
    return dict(DEFAULT_RULE)


# --- the aggregate state ------------------------------------------------------------------


def empty_state() -> dict[str, Any]:
    return {
        "secondsMicros": 0,
        "watched": "",
        "duration": None,
        "pages": [],
        "maxPages": None,
        "bestScore": None,
        "complete": False,
        "any": False,
    }


# --- watched media: one bit per second ----------------------------------------------------
#
# Second ``i`` of a media is the interval [i, i+1). A segment marks the seconds whose middle
# it covers (from <= i + 0.5 < to), and a segment that reaches the
# reported duration marks every second up to the end, so that watching a whole media of
# 90.5 s, or of 0.3 s, counts it whole. Marking is per segment, so the set does not depend on
# the order or grouping of reports, and its size is bounded by the media's length.


def _second(value: float) -> int:
    """The first second whose middle is at or after ``value``."""
    return math.ceil(value - 0.5)


def segment_bits(start: float, end: float, duration: float) -> int:
    """The seconds a watched segment marks, as bits of an integer."""
    first, last = _second(start), _second(end)
    if end >= duration:
        last = max(last, math.ceil(duration))
    if last <= first:
        return 0
    return ((1 << (last - first)) - 1) << first


def decode_watched(value: str) -> int:
    return int.from_bytes(base64.b64decode(value), "little") if value else 0


def encode_watched(bits: int) -> str:
    if not bits:
        return ""
    return base64.b64encode(bits.to_bytes((bits.bit_length() + 7) // 8, "little")).decode()


def seconds_of(length: float) -> int:
    """How many seconds a media of ``length`` seconds has (at least one)."""
    return max(1, _second(length))


def watched_seconds(bits: int, length: float) -> int:
    """How many of the media's first ``seconds_of(length)`` seconds are marked."""
    return (bits & ((1 << seconds_of(length)) - 1)).bit_count()


def _max(current: Any, value: Any) -> Any:
    return value if current is None else max(current, value)


def visit(state: Mapping[str, Any] | None, reports: Iterable[Any]) -> dict[str, Any]:
    """The state after one progress request: its reports folded in, and the activity opened
    (a request opens it even with no report, and opening is what a ``view`` rule asks)."""
    after = fold(state, reports)
    after["any"] = True
    return after


def fold(state: Mapping[str, Any] | None, reports: Iterable[Any]) -> dict[str, Any]:
    """The state after ``reports``; ``state`` is not modified. Unknown or invalid reports
    are ignored."""
    base = empty_state()
    if state:
        base.update(state)
    micros = int(base["secondsMicros"])
    watched = decode_watched(base["watched"])
    for start, end in base.pop("segments", None) or ():  # a state stored as intervals
        watched |= segment_bits(float(start), float(end), float(base["duration"] or end))
    pages = set(base["pages"])
    duration, max_pages, best = base["duration"], base["maxPages"], base["bestScore"]
    complete, seen = bool(base["complete"]), bool(base["any"])
    for report in reports:
        kind = report_type(report)
        if kind not in REPORT_TYPES or validate_report(report):
            continue
        seen = True
        if kind == "time":
            micros += round(float(report["seconds"]) * _MICROS)
        elif kind == "media":
            length = float(report["duration"])
            watched |= segment_bits(float(report["from"]), float(report["to"]), length)
            duration = _max(duration, length)
        elif kind == "page":
            pages.add(report["page"])
            max_pages = _max(max_pages, report["pages"])
        elif kind == "score":
            best = _max(best, float(report["score"]) / float(report["maxScore"]))
        elif kind == "complete":
            complete = True
    return {
        "secondsMicros": micros,
        "watched": encode_watched(watched),
        "duration": duration,
        "pages": sorted(pages),
        "maxPages": max_pages,
        "bestScore": best,
        "complete": complete,
        "any": seen,
    }


# --- deciding -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    status: str
    progress: float


def _reached(value: float, target: float) -> bool:
    return value >= target - _EPSILON * max(1.0, abs(target))


def _fraction(value: float, target: float) -> tuple[bool, float]:
    if target <= 0:
        return False, 0.0
    return _reached(value, target), value / target


def _length(settings: Any, key: str, reported: Any, valid) -> float | None:
    """The length a rule measures against: the activity's own setting first, else the
    largest one reported."""
    if isinstance(settings, Mapping) and valid(settings.get(key)):
        return float(settings[key])
    return float(reported) if reported else None


def _valid_duration(value: Any) -> bool:
    number = _number(value)
    return number is not None and 0 < number <= MAX_MEDIA_DURATION


def _valid_pages(value: Any) -> bool:
    number = _integer(value)
    return number is not None and 1 <= number <= MAX_PAGES


def measure(rule: Mapping[str, Any], state: Mapping[str, Any], settings: Any) -> tuple[bool, float]:
    """(condition met, raw fraction toward it) of one rule over the state."""
    kind = rule.get("type")
    if kind == "view":
        return bool(state["any"]), 0.0
    if kind == "reported":
        return bool(state["complete"]), 0.0
    if kind == "time":
        target = float(rule["minSeconds"]) * _MICROS
        return _fraction(float(state["secondsMicros"]), target)
    if kind == "media":
        length = _length(settings, "duration", state["duration"], _valid_duration)
        if length is None:
            return False, 0.0
        watched = watched_seconds(decode_watched(state["watched"]), length)
        return _fraction(float(watched), float(rule["threshold"]) * seconds_of(length))
    if kind == "pages":
        length = _length(settings, "pages", state["maxPages"], _valid_pages)
        if length is None:
            return False, 0.0
        seen = sum(1 for page in state["pages"] if page <= length)
        return _fraction(float(seen), float(rule["threshold"]) * length)
    if kind == "score":
        if state["bestScore"] is None:
            return False, 0.0
        return _fraction(float(state["bestScore"]), float(rule["passingScore"]))
    raise ValueError(f"unknown completion rule type {kind!r}")


def decide(settings: Any, state: Mapping[str, Any] | None, previous: str | None = None) -> Decision:
    """The status and progress the activity's rule gives for ``state``.

    A rule that does not validate (stored around the admin's validation) never completes:
    the service grants no completion it cannot justify. ``previous == completed`` is kept.
    """
    if previous == COMPLETED:
        return Decision(COMPLETED, 1.0)
    full = empty_state()
    full.update(state or {})
    rule = rule_of(settings)
    if validate_rule(rule):
        return Decision(IN_PROGRESS, 0.0)
    done, fraction = measure(rule, full, settings)
    if done:
        return Decision(COMPLETED, 1.0)
    ceiling = 1.0 - 10.0**-PROGRESS_DECIMALS
    progress = min(max(round(fraction, PROGRESS_DECIMALS), 0.0), ceiling)
    return Decision(IN_PROGRESS, progress)

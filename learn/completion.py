"""The completion rules: pure functions over typed values, no Django, property-tested.

Input is read once, at the edge, into typed values, and everything below trusts them:
``read_reports`` turns the reports of a request into ``Report`` values (the progress
serializer calls it; it names every bad field), ``read_settings`` turns an activity's
settings into ``Settings``: its ``Rule`` and the lengths it sets (the model's validation
calls it for its messages, the progress service for the values). Each bound on a number is
one ``Bound``, read by reports and settings alike.

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
- Only reports of known types count; any other JSON object is ``OtherReport`` (the caller
  stores it anyway).
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

MAX_SECONDS_PER_REPORT = 86_400
# Bounds the contract leaves open (see docs/api.md): a week of media, ten thousand pages.
MAX_MEDIA_DURATION = 604_800
MAX_PAGES = 10_000
# Progress is answered to three decimals, as in the contract's examples (20 of 60 s: 0.333).
PROGRESS_DECIMALS = 3
# Float slack when comparing a measure with a threshold (0.7 x 10 is 7.000000000000001).
_EPSILON = 1e-9
_MICROS = 1_000_000

# Messages by path into the JSON the client sent: a report's by its keys (``seconds``,
# ``maxScore``), a request's by position and then key; a report that is not an object has
# its messages at its own path (a list, not keyed). The edge answers these paths as they are.
Errors = dict[str, list[str]]


class Invalid(ValueError):
    """What is wrong with an input: ``errors``, messages by path into it (``Errors``)."""

    def __init__(self, errors: dict | list) -> None:
        super().__init__(errors)
        self.errors = errors


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


@dataclass(frozen=True)
class Bound:
    """The kind and range of a number in a report or in an activity's settings, and what is
    said of a value outside them: the one definition of each."""

    message: str
    low: float = -math.inf
    high: float = math.inf
    low_excluded: bool = False
    whole: bool = False

    def number(self, value: Any) -> float | int | None:
        """``value`` as a number of this kind (a float, or an int when whole), in range or not."""
        return _integer(value) if self.whole else _number(value)

    def read(self, value: Any) -> float | int | None:
        """``value`` as a number of this kind within the range; None when it is not one."""
        number = self.number(value)
        if number is None or number < self.low or number > self.high:
            return None
        return None if self.low_excluded and number == self.low else number


SECONDS = Bound(
    f"Must be a number greater than 0 and at most {MAX_SECONDS_PER_REPORT}.",
    low=0,
    high=MAX_SECONDS_PER_REPORT,
    low_excluded=True,
)
DURATION = Bound(
    f"Must be a number of seconds greater than 0 and at most {MAX_MEDIA_DURATION}.",
    low=0,
    high=MAX_MEDIA_DURATION,
    low_excluded=True,
)
POSITION = Bound("Must be a number of seconds, at least 0.", low=0)
END = Bound("Must be a number of seconds.")
PAGE = Bound("Must be a whole number, at least 1.", low=1, whole=True)
PAGES = Bound(f"Must be a whole number from 1 to {MAX_PAGES}.", low=1, high=MAX_PAGES, whole=True)
SCORE = Bound("Must be a number, at least 0.", low=0)
MAX_SCORE = Bound("Must be a number greater than 0.", low=0, low_excluded=True)
FRACTION = Bound("Must be a number greater than 0 and at most 1.", low=0, high=1, low_excluded=True)
MIN_SECONDS = Bound("Must be a number of seconds greater than 0.", low=0, low_excluded=True)


# --- reports ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeReport:
    seconds: float


@dataclass(frozen=True)
class MediaReport:
    """A watched segment ``start`` <= ``end`` <= ``duration`` (the wire's from, to)."""

    start: float
    end: float
    duration: float


@dataclass(frozen=True)
class PageReport:
    page: int
    pages: int


@dataclass(frozen=True)
class ScoreReport:
    score: float
    max_score: float


@dataclass(frozen=True)
class CompleteReport:
    pass


@dataclass(frozen=True)
class OtherReport:
    """Any other JSON object (a type the server does not know, or no string type)."""


Report = TimeReport | MediaReport | PageReport | ScoreReport | CompleteReport | OtherReport


@dataclass(frozen=True)
class Received:
    """A report as received (stored exactly so) and what it says (folded)."""

    payload: Mapping[str, Any]
    report: Report


def report_type(payload: Any) -> str | None:
    """The ``type`` of a received report when it is a string."""
    if isinstance(payload, Mapping) and isinstance(payload.get("type"), str):
        return payload["type"]
    return None


def read_report(payload: Any) -> Report:
    """What one received report says; raises ``Invalid`` naming each bad field.

    Any JSON object may be stored (the interface's reports carry arbitrary keys); one without
    a string ``type``, or with a type the server does not know, is an ``OtherReport``. Only
    reports of a known type must also carry valid values.
    """
    if not isinstance(payload, Mapping):
        raise Invalid(["Each report must be a JSON object."])
    reader = _REPORT_READERS.get(report_type(payload))
    return reader(payload) if reader else OtherReport()


def read_reports(payloads: Iterable[Any]) -> list[Received]:
    """Every report of a request, read; raises ``Invalid`` with the errors of each invalid
    one by its position."""
    received: list[Received] = []
    errors: dict[int, Errors | list[str]] = {}
    for index, payload in enumerate(payloads):
        try:
            received.append(Received(payload, read_report(payload)))
        except Invalid as invalid:
            errors[index] = invalid.errors
    if errors:
        raise Invalid(errors)
    return received


def _read_time(payload: Mapping) -> Report:
    seconds = SECONDS.read(payload.get("seconds"))
    if seconds is None:
        raise Invalid({"seconds": [SECONDS.message]})
    return TimeReport(seconds)


def _read_media(payload: Mapping) -> Report:
    errors: Errors = {}
    duration = DURATION.read(payload.get("duration"))
    if duration is None:
        errors["duration"] = [DURATION.message]
    start, end = POSITION.number(payload.get("from")), END.number(payload.get("to"))
    if POSITION.read(start) is None:
        errors["from"] = [POSITION.message]
    if end is None:
        errors["to"] = [END.message]
    elif start is not None and end < start:
        errors["to"] = ["Must not be less than from."]
    elif duration is not None and end > duration:
        errors["to"] = ["Must not be greater than duration."]
    if errors:
        raise Invalid(errors)
    return MediaReport(start, end, duration)


def _part_of_whole(
    payload: Mapping, part_key: str, part: Bound, whole_key: str, whole: Bound
) -> tuple[Any, Any]:
    """A number and the whole it is part of (page of pages, score of maxScore), read;
    the part may not exceed the whole."""
    errors: Errors = {}
    total = whole.read(payload.get(whole_key))
    if total is None:
        errors[whole_key] = [whole.message]
    value = part.read(payload.get(part_key))
    if value is None:
        errors[part_key] = [part.message]
    elif total is not None and value > total:
        errors[part_key] = [f"Must not be greater than {whole_key}."]
    if errors:
        raise Invalid(errors)
    return value, total


def _read_page(payload: Mapping) -> Report:
    return PageReport(*_part_of_whole(payload, "page", PAGE, "pages", PAGES))


def _read_score(payload: Mapping) -> Report:
    return ScoreReport(*_part_of_whole(payload, "score", SCORE, "maxScore", MAX_SCORE))


_REPORT_READERS = {
    "time": _read_time,
    "media": _read_media,
    "page": _read_page,
    "score": _read_score,
    "complete": lambda payload: CompleteReport(),
}
REPORT_TYPES = tuple(_REPORT_READERS)


# --- rules and settings -------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A completion rule as read: its ``type`` and the one number it asks for (``target``:
    seconds for ``time``, a fraction for ``media``, ``pages`` and ``score``; none for
    ``view`` and ``reported``). ``UNUSABLE`` stands for a rule stored around validation: it
    never completes, since the service grants no completion it cannot justify."""

    type: str
    target: float | None = None


# rule type -> its one key besides "type" and that key's bound, if any
_RULE_KEYS: dict[str, tuple[str, Bound] | None] = {
    "view": None,
    "time": ("minSeconds", MIN_SECONDS),
    "media": ("threshold", FRACTION),
    "pages": ("threshold", FRACTION),
    "score": ("passingScore", FRACTION),
    "reported": None,
}
RULE_TYPES = tuple(_RULE_KEYS)
# The same, for the schema (learn.serializers): each rule's key and its bound.
RULE_KEYS = _RULE_KEYS
VIEW = Rule("view")
UNUSABLE = Rule("unusable")


def read_rule(value: Any) -> tuple[Rule, list[str]]:
    """The completion rule ``value`` states, and human messages of what is wrong with it
    (then the rule is ``UNUSABLE``)."""
    if not isinstance(value, Mapping):
        return UNUSABLE, ['A completion rule must be a JSON object such as {"type": "view"}.']
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in _RULE_KEYS:
        return UNUSABLE, [
            f"Unknown completion rule type {kind!r}; expected one of: {', '.join(RULE_TYPES)}."
        ]
    key, bound = _RULE_KEYS[kind] or (None, None)
    messages: list[str] = []
    target = bound.read(value.get(key)) if bound else None
    if bound and target is None:
        messages.append(f"{key}: {bound.message}")
    unknown = sorted(set(value) - {"type", key})
    if unknown:
        allowed = key or "no other key"
        messages.append(
            f"Unknown key(s) in a {kind} rule: {', '.join(unknown)} (allowed: {allowed})."
        )
    return (UNUSABLE, messages) if messages else (Rule(kind, target), [])


@dataclass(frozen=True)
class Settings:
    """What the completion rules read of an activity's settings: the rule (``view`` when
    none is set) and the lengths the media and pages rules measure against, when set."""

    rule: Rule = VIEW
    duration: float | None = None
    pages: int | None = None


def read_settings(value: Any) -> tuple[Settings, list[str]]:
    """An activity's settings as the rules read them, and human messages of what is wrong
    (empty when valid). Settings may be any JSON value; when it is an object,
    ``completion`` must be a valid rule, ``duration`` a positive number of seconds and
    ``pages`` a page count. A part that is wrong (stored around validation) reads as an
    ``UNUSABLE`` rule, or as no length set."""
    if not isinstance(value, Mapping):
        return Settings(), []
    rule: Rule = VIEW
    messages: list[str] = []
    if value.get("completion") is not None:
        rule, found = read_rule(value["completion"])
        messages += [f"completion: {message}" for message in found]
    lengths: dict[str, Any] = {}
    for key, bound in (("duration", DURATION), ("pages", PAGES)):
        if value.get(key) is not None:
            lengths[key] = bound.read(value[key])
            if lengths[key] is None:
                messages.append(f"{key}: {bound.message}")
    return Settings(rule, **lengths), messages


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


def visit(state: Mapping[str, Any] | None, reports: Iterable[Report]) -> dict[str, Any]:
    """The state after one progress request: its reports folded in, and the activity opened
    (a request opens it even with no report, and opening is what a ``view`` rule asks)."""
    after = fold(state, reports)
    after["any"] = True
    return after


def fold(state: Mapping[str, Any] | None, reports: Iterable[Report]) -> dict[str, Any]:
    """The state after ``reports``; ``state`` is not modified. ``OtherReport`` is ignored."""
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
        match report:
            case TimeReport(seconds):
                micros += round(seconds * _MICROS)
            case MediaReport(start, end, length):
                watched |= segment_bits(start, end, length)
                duration = _max(duration, length)
            case PageReport(page, of):
                pages.add(page)
                max_pages = _max(max_pages, of)
            case ScoreReport(score, max_score):
                best = _max(best, score / max_score)
            case CompleteReport():
                complete = True
            case _:
                continue
        seen = True
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


def _length(fixed: float | None, reported: Any) -> float | None:
    """The length a rule measures against: the activity's own setting first, else the
    largest one reported."""
    if fixed is not None:
        return float(fixed)
    return float(reported) if reported else None


def _amount(settings: Settings, state: Mapping[str, Any]) -> tuple[float, float] | None:
    """What the activity's rule measures over the state and the target it asks, in the
    rule's unit: microseconds spent (``time``), seconds of the media watched (``media``),
    pages seen (``pages``), the best score's fraction (``score``). None while there is
    nothing to measure (no length known, no score yet) and for a rule that measures no
    amount (``view``, ``reported``, ``UNUSABLE``)."""
    rule = settings.rule
    if rule.type == "time":
        return float(state["secondsMicros"]), rule.target * _MICROS
    if rule.type == "media":
        length = _length(settings.duration, state["duration"])
        if length is None:
            return None
        watched = watched_seconds(decode_watched(state["watched"]), length)
        return float(watched), rule.target * seconds_of(length)
    if rule.type == "pages":
        length = _length(settings.pages, state["maxPages"])
        if length is None:
            return None
        seen = sum(1 for page in state["pages"] if page <= length)
        return float(seen), rule.target * length
    if rule.type == "score" and state["bestScore"] is not None:
        return float(state["bestScore"]), rule.target
    return None


def _met(
    rule: Rule, state: Mapping[str, Any], amount: tuple[float, float] | None
) -> tuple[bool, float]:
    """(condition met, raw fraction toward it) of ``rule`` over the state, whose ``amount``
    is measured."""
    if rule.type == "view":
        return bool(state["any"]), 0.0
    if rule.type == "reported":
        return bool(state["complete"]), 0.0
    return (False, 0.0) if amount is None else _fraction(*amount)


def _full(state: Mapping[str, Any] | None) -> dict[str, Any]:
    """``state`` with every key, as the empty state has it where ``state`` has none."""
    full = empty_state()
    full.update(state or {})
    return full


def decide(
    settings: Settings, state: Mapping[str, Any] | None, previous: str | None = None
) -> Decision:
    """The status and progress the activity's rule gives for ``state``.

    An ``UNUSABLE`` rule never completes. ``previous == completed`` is kept.
    """
    answer = outcome(settings, state, previous)
    return Decision(answer.status, answer.progress)


# --- what remains -------------------------------------------------------------------------

# What a learner still has to do to complete an activity under its rule (``remaining``);
# None once completed.
Remaining = dict[str, Any] | None


def _short_of(value: float, target: float) -> int:
    """How many whole units ``value`` is short of ``target``, rounded up: 0 exactly when
    ``_reached(value, target)``, so a rule not met always has at least 1 left (the same
    slack absorbs float noise: 0.9 x 600 asks for 540 seconds, not 541)."""
    gap = target - value - _EPSILON * max(1.0, abs(target))
    return max(0, math.ceil(gap))


def _left(rule: Rule, state: Mapping[str, Any], amount: tuple[float, float] | None) -> Remaining:
    """What ``rule`` still asks of the state, whose ``amount`` is measured."""
    if rule.type == "view":
        return {"open": True}
    if rule.type == "reported":
        return {"report": "complete"}
    if rule.type == "score":
        return {"passingScore": rule.target, "best": state["bestScore"]}
    short = None if amount is None else _short_of(*amount)
    if rule.type == "time":  # microseconds short, asked in whole seconds rounded up
        return {"seconds": -(-short // _MICROS)}
    if rule.type == "media":
        return {"seconds": short}
    if rule.type == "pages":
        return {"pages": short}
    return {}


def remaining(settings: Settings, state: Mapping[str, Any] | None, status: str) -> Remaining:
    """What remains of the activity for a learner whose reports folded into ``state`` and
    whose status is ``status``: None exactly when ``status`` is completed, else what the
    rule still asks (docs/api.md, "What remains").

    The amounts are measured as ``decide`` measures (the same lengths, the same slack), so
    an activity its rule would complete has 0 left and one it would not has at least 1.
    They never grow as reports arrive, except where a larger duration or page count
    reported later (the activity setting none) lengthens what the rule measures against:
    a media with no duration known yet has ``{"seconds": None}``, pages with no count
    ``{"pages": None}``. A rule stored around validation (``UNUSABLE``) never completes and
    has nothing the learner could do: ``{}``."""
    if status == COMPLETED:
        return None
    full = _full(state)
    return _left(settings.rule, full, _amount(settings, full))


# --- a progress request's answer ----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a progress request answers: the status and progress ``decide`` gave, and what
    ``remaining`` leaves (None exactly when completed)."""

    status: str
    progress: float
    remaining: Remaining


def outcome(
    settings: Settings, state: Mapping[str, Any] | None, previous: str | None = None
) -> Outcome:
    """``decide`` and ``remaining`` of the activity for ``state`` at once, the rule
    measured once (a media's watched seconds are decoded once per request)."""
    if previous == COMPLETED:
        return Outcome(COMPLETED, 1.0, None)
    full = _full(state)
    amount = _amount(settings, full)
    done, fraction = _met(settings.rule, full, amount)
    if done:
        return Outcome(COMPLETED, 1.0, None)
    ceiling = 1.0 - 10.0**-PROGRESS_DECIMALS
    progress = min(max(round(fraction, PROGRESS_DECIMALS), 0.0), ceiling)
    return Outcome(IN_PROGRESS, progress, _left(settings.rule, full, amount))

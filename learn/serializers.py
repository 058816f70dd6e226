"""Input validation and output shapes of the learning area (wire names are camelCase), and
the ``Shape`` of each body a hot read answers (``lms.web.shapes``: built from the rows of
``learn.wire_reads`` as the serializer would answer them)."""

from __future__ import annotations

import math

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from learn import completion
from learn.models import Activity, ProgressStatus
from lms.fields import (
    JsonTimestampField,
    QueryChoiceField,
    QueryIdField,
    QueryIntegerField,
    QueryTextField,
    StrictCharField,
    StrictUUIDField,
)
from lms.pagination import FeedCursorField
from lms.schema import SHARED_SCHEMAS
from lms.serializers import OrgScopedSerializer
from lms.sorting import SortKey, parse_sort
from lms.web.shapes import Shape

MAX_REPORTS = 100


def _known_report(kind: str, properties: dict, note: str = "") -> dict:
    return {
        "type": "object",
        "title": f"{kind} report",
        "description": note,
        "properties": {"type": {"type": "string", "enum": [kind]}, **properties},
        "required": ["type", *properties],
    }


def _number(
    bound: completion.Bound, *, at_least: float | None = None, at_most: float | None = None
) -> dict:
    """``bound`` (``learn.completion``, where each report bound is written once) as OpenAPI
    says it; ``at_least``/``at_most`` for the limit another field's bound sets (from <= to
    <= duration, page <= pages)."""
    schema: dict = {"type": "integer" if bound.whole else "number"}
    low = bound.low if math.isfinite(bound.low) else at_least
    high = bound.high if math.isfinite(bound.high) else at_most
    if low is not None:
        schema["minimum"] = low
    if high is not None:
        schema["maximum"] = high
    if bound.low_excluded:
        schema["exclusiveMinimum"] = True
    return schema


# The report shapes as OpenAPI can say them; the rules across fields (from <= to <=
# duration, page <= pages, score <= maxScore) are in each description and in docs/api.md.
REPORT_SCHEMA = {
    "oneOf": [
        _known_report("time", {"seconds": _number(completion.SECONDS)}),
        _known_report(
            "media",
            {
                "from": _number(completion.POSITION, at_most=completion.DURATION.high),
                "to": _number(
                    completion.END,
                    at_least=completion.POSITION.low,
                    at_most=completion.DURATION.high,
                ),
                "duration": _number(completion.DURATION),
            },
            "A watched segment: from <= to <= duration.",
        ),
        _known_report(
            "page",
            {
                "page": _number(completion.PAGE, at_most=completion.PAGES.high),
                "pages": _number(completion.PAGES),
            },
            "A viewed page: page <= pages.",
        ),
        _known_report(
            "score",
            {"score": _number(completion.SCORE), "maxScore": _number(completion.MAX_SCORE)},
            "An assessment result: score <= maxScore.",
        ),
        _known_report("complete", {}),
        {
            "type": "object",
            "title": "other report",
            "description": "Any other JSON object (a type the server does not know, or no "
            "string type): stored as received, ignored.",
            "not": {
                "properties": {"type": {"enum": sorted(completion.REPORT_TYPES)}},
                "required": ["type"],
            },
        },
    ]
}


@extend_schema_field(REPORT_SCHEMA)
class ReportField(serializers.DictField):
    """One report object; the list is read into typed reports by ``completion.read_reports``."""


def _remainder(title: str, properties: dict, description: str) -> dict:
    return {
        "type": "object",
        "title": f"{title} remaining",
        "description": description,
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _left(kind: str) -> dict:
    return {"type": "integer", "minimum": 0, "nullable": True, "description": kind}


# What ``completion.remaining`` answers before completion, one shape per rule (docs/api.md,
# "What remains"); null once completed.
REMAINING_SCHEMA = {
    "oneOf": [
        _remainder(
            "open",
            {"open": {"type": "boolean", "enum": [True]}},
            "view: opening the activity (any progress request) completes it.",
        ),
        _remainder(
            "seconds",
            {"seconds": _left("Seconds, rounded up.")},
            "time: seconds still to spend; media: seconds still to watch to reach the "
            "threshold (null while no duration is known).",
        ),
        _remainder(
            "pages",
            {"pages": _left("Distinct pages.")},
            "pages: distinct pages still to view (null while no page count is known).",
        ),
        _remainder(
            "score",
            {
                "passingScore": {"type": "number", "minimum": 0, "maximum": 1},
                "best": {"type": "number", "minimum": 0, "maximum": 1, "nullable": True},
            },
            "score: the passing score of the rule and the best score / maxScore so far "
            "(null before any score).",
        ),
        _remainder(
            "report",
            {"report": {"type": "string", "enum": ["complete"]}},
            "reported: a complete report is what remains.",
        ),
        {
            "type": "object",
            "title": "nothing remaining",
            "description": "A completion rule stored invalid: the activity never completes.",
            "maxProperties": 0,
        },
    ]
}


SHARED_SCHEMAS["Remaining"] = REMAINING_SCHEMA


def _bounded(bound: completion.Bound) -> dict:
    """A number of ``bound``'s kind and range, as JSON Schema."""
    schema: dict = {"type": "integer" if bound.whole else "number"}
    if bound.low != -math.inf:
        schema["minimum"] = bound.low
        if bound.low_excluded:  # OpenAPI 3.0: a flag beside the minimum
            schema["exclusiveMinimum"] = True
    if bound.high != math.inf:
        schema["maximum"] = bound.high
    return schema


def _rule(kind: str, key: tuple[str, completion.Bound] | None) -> dict:
    properties: dict = {"type": {"type": "string", "enum": [kind]}}
    if key is not None:
        properties[key[0]] = _bounded(key[1])
    return {
        "type": "object",
        "title": f"{kind} rule",
        "properties": properties,
        "required": list(properties),
    }


# An activity's settings: its completion rule (one of the six, as learn.completion reads
# them), the media's duration and the document's page count; other keys as staff typed them.
SETTINGS_SCHEMA = {
    "type": "object",
    "properties": {
        "completion": {
            "oneOf": [_rule(kind, key) for kind, key in completion.RULE_KEYS.items()],
            "description": "The completion rule (the API guide's Completion rules); none: view.",
        },
        "duration": {**_bounded(completion.DURATION), "description": "A media's seconds."},
        "pages": {**_bounded(completion.PAGES), "description": "A document's page count."},
    },
    "additionalProperties": True,
}
SHARED_SCHEMAS["ActivitySettings"] = SETTINGS_SCHEMA


@extend_schema_field(SETTINGS_SCHEMA)
class SettingsField(serializers.JSONField):
    """An activity's settings, as stored."""


@extend_schema_field(REMAINING_SCHEMA)
class RemainingField(serializers.JSONField):
    """What remains of an activity under its rule (``completion.remaining``); null once
    completed."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault(
            "help_text",
            "What the learner still has to do to complete the activity under its rule; null "
            "exactly when completed.",
        )
        super().__init__(read_only=True, allow_null=True, **kwargs)


class ProgressInputSerializer(serializers.Serializer):
    activity = StrictUUIDField(help_text="The activity's id.")
    reports = serializers.ListField(
        child=ReportField(),
        max_length=MAX_REPORTS,
        allow_empty=True,
        help_text="At most 100 report objects; may be empty (opening the activity). Known "
        "types: time, media, page, score, complete (see the [API guide]"
        "(/api/docs/guide#report-types)); others are stored and "
        "ignored.",
    )

    def validate_reports(self, reports) -> list[completion.Received]:
        """Each report as received and as read; errors keyed by their paths into the body
        (``completion.Errors``), so that the details read ``reports.3.seconds``."""
        try:
            return completion.read_reports(reports)
        except completion.Invalid as invalid:
            raise serializers.ValidationError(invalid.errors) from None


class ProgressResultSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=[completion.IN_PROGRESS, completion.COMPLETED],
        help_text="Decided by the server from the activity's completion rule "
        "(not-started is never answered: a report, even none, opens the activity).",
    )
    progress = serializers.FloatField(
        min_value=0.0, max_value=1.0, help_text="How far toward completion (1.0 once completed)."
    )
    remaining = RemainingField()


class ActivitySerializer(OrgScopedSerializer):
    moduleId = serializers.UUIDField(source="module_id", read_only=True)
    courseId = serializers.UUIDField(source="course_id", read_only=True)
    settings = SettingsField(read_only=True, allow_null=True)

    class Meta:
        model = Activity
        fields = [
            "orgId",
            "id",
            "moduleId",
            "courseId",
            "seq",
            "title",
            "settings",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = fields


# The listing's wire shape, declared once: its read selects ``ACTIVITY.columns`` and its view
# answers ``ACTIVITY.bodies`` (``learn.wire_reads``), without a serializer per activity.
ACTIVITY = Shape(ActivitySerializer)


class ActivityProgressSerializer(serializers.Serializer):
    activity = serializers.UUIDField(source="activity_id", help_text="The activity's id.")
    status = serializers.ChoiceField(
        choices=ProgressStatus.choices,
        help_text="What the last progress report answered; not-started without one.",
    )
    progress = serializers.FloatField(min_value=0.0, max_value=1.0)
    remaining = RemainingField()


class CourseProgressSerializer(serializers.Serializer):
    courseId = serializers.UUIDField(source="course_id")
    status = serializers.ChoiceField(
        choices=ProgressStatus.choices,
        help_text="completed once every listed activity was completed (it latches); "
        "in-progress once any listed activity has a report; else not-started.",
    )
    progress = serializers.FloatField(
        min_value=0.0, max_value=1.0, help_text="Completed / listed activities, now."
    )
    completedAt = serializers.DateTimeField(
        source="completed_at", allow_null=True, help_text="When the course was completed."
    )
    activities = ActivityProgressSerializer(
        many=True, help_text="In the order the course's activities are listed."
    )


# --- a course's outline (8.2) and the caller's courses (8.1) ----------------------------------
# Output shapes for the schema and for ``COURSE_OUTLINE`` / ``ENROLLED_COURSE`` (below), which
# build the same bodies without a serializer per row.

_STATUS_HELP = "The caller's: what the last progress report answered; not-started without one."


class OutlineActivitySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    seq = serializers.IntegerField(min_value=1)
    title = serializers.CharField(allow_blank=True, help_text="May be empty.")
    settings = SettingsField(allow_null=True, help_text="As stored.")
    status = serializers.ChoiceField(choices=ProgressStatus.choices, help_text=_STATUS_HELP)
    progress = serializers.FloatField(min_value=0.0, max_value=1.0)
    remaining = RemainingField()


class OutlineModuleSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    seq = serializers.IntegerField(min_value=1)
    title = serializers.CharField()
    activities = OutlineActivitySerializer(
        many=True,
        help_text="Its published activities by seq: those the course's activity listing shows.",
    )


def _course_standing() -> tuple[serializers.Field, ...]:
    """A course's status, progress and completedAt for the caller, as its progress read
    answers them."""
    return (
        serializers.ChoiceField(
            choices=ProgressStatus.choices,
            help_text="completed once every listed activity was completed (it latches); "
            "in-progress once any listed activity has a report; else not-started.",
        ),
        serializers.FloatField(
            min_value=0.0, max_value=1.0, help_text="Completed / listed activities, now."
        ),
        serializers.DateTimeField(
            source="completed_at", allow_null=True, help_text="When the course was completed."
        ),
    )


# The course's own columns, first in the outline and in each of the caller's courses:
# ``learn.wire_reads`` reads each field's source as a column of ``Course`` (``COURSE_HEAD``)
# and answers it as read, so a column of the course shown in both is a field here. (A
# comment, not a docstring: the schema would give it to both shapes as their description.)
class CourseHeadSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    orgId = serializers.UUIDField(source="org_id")
    title = serializers.CharField()


class CourseOutlineSerializer(CourseHeadSerializer):
    status, progress, completedAt = _course_standing()
    modules = OutlineModuleSerializer(many=True, help_text="The published modules by seq.")


class EnrolledCourseSerializer(CourseHeadSerializer):
    enrolledAt = serializers.DateTimeField(source="enrolled_at", help_text="When enrolled.")
    status, progress, completedAt = _course_standing()
    activityCount = serializers.IntegerField(
        source="activity_count",
        min_value=0,
        help_text="How many activities the course's activity listing shows.",
    )


# The outline and the caller's courses, composed by ``learn.wire_reads`` as these shapes'
# records (ids and times wire text already), and their bodies built from them as the
# serializers answer. ``COURSE_HEAD.sources``: the course's columns both read.
COURSE_HEAD = Shape(CourseHeadSerializer)
COURSE_OUTLINE = Shape(CourseOutlineSerializer)
OUTLINE_MODULE = Shape(OutlineModuleSerializer)
OUTLINE_ACTIVITY = Shape(OutlineActivitySerializer)
ENROLLED_COURSE = Shape(EnrolledCourseSerializer)


# --- a course's roster (9.4) and report (9.5) -------------------------------------------------

ROSTER_SORT_FIELDS = ("enrolledAt", "completedAt", "progress", "email", "dueAt", "lastActivityAt")
DEFAULT_ROSTER_SORT = "-enrolledAt"
SEARCH_MAX_LENGTH = 200


class RosterQuerySerializer(serializers.Serializer):
    """The roster's filters and sort, as the query string gives them (``page`` and
    ``pageSize`` are ``lms.pagination``'s). Unknown parameters are ignored."""

    status = QueryChoiceField(
        choices=ProgressStatus.values, required=False, help_text="Only learners of this status."
    )
    overdue = QueryChoiceField(
        choices=["true", "false"],
        required=False,
        help_text="true: only learners whose dueAt has passed and who have not completed; "
        "false: only the others.",
    )
    search = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=SEARCH_MAX_LENGTH,
        help_text="Case-insensitive substring of the e-mail, first or last name. `%`, `_` and "
        "`\\` match themselves. Matched as given (not trimmed); empty means no filter.",
    )
    sort = QueryTextField(
        required=False,
        trim_whitespace=False,
        default=DEFAULT_ROSTER_SORT,
        help_text="Comma-separated fields from "
        + ", ".join(f"`{field}`" for field in ROSTER_SORT_FIELDS)
        + ", each optionally prefixed with `-` for descending. `email` orders by the "
        "lower-cased address in code-point order. A null sorts after every value in both "
        "directions. A field given twice counts once (the first decides). The member id is "
        "always the final key.",
    )

    def validate_sort(self, value: str) -> list[SortKey]:
        try:
            return parse_sort(value, ROSTER_SORT_FIELDS)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from exc


class FunnelStepSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    moduleId = serializers.UUIDField(source="module_id")
    seq = serializers.IntegerField(min_value=1)
    title = serializers.CharField()
    started = serializers.IntegerField(
        min_value=0, help_text="Enrolled learners with a report on it."
    )
    completed = serializers.IntegerField(
        min_value=0, help_text="Enrolled learners who completed it."
    )


class CourseReportSerializer(serializers.Serializer):
    courseId = serializers.UUIDField(source="course_id")
    title = serializers.CharField()
    enrolled = serializers.IntegerField(min_value=0)
    notStarted = serializers.IntegerField(source="not_started", min_value=0)
    inProgress = serializers.IntegerField(source="in_progress", min_value=0)
    completed = serializers.IntegerField(min_value=0)
    overdue = serializers.IntegerField(min_value=0)
    completionRate = serializers.FloatField(
        source="completion_rate", min_value=0.0, max_value=1.0, help_text="completed / enrolled."
    )
    activities = FunnelStepSerializer(
        many=True, help_text="The activities the course lists, in the order of its activity list."
    )


COURSE_REPORT = Shape(CourseReportSerializer)
# --- enrolment (CONTRACT 9.3) ----------------------------------------------------------------

MAX_ENROL = 500


def _repeats(items: list, *, field: str, key=lambda item: item) -> None:
    """A 400 naming each item that repeats an earlier one (``field.N``)."""
    first: dict = {}
    repeated = {}
    for index, item in enumerate(items):
        earlier = first.setdefault(key(item), index)
        if earlier != index:
            repeated[index] = [f"Repeats {field}.{earlier}."]
    if repeated:
        raise serializers.ValidationError(repeated)


class EnrolInputSerializer(serializers.Serializer):
    memberIds = serializers.ListField(
        child=StrictUUIDField(),
        min_length=1,
        max_length=MAX_ENROL,
        required=False,
        help_text="1 to 500 member ids (the membership ids 9.1 answers), each once. Give "
        "this or emails.",
    )
    emails = serializers.ListField(
        child=StrictCharField(max_length=254),
        min_length=1,
        max_length=MAX_ENROL,
        required=False,
        help_text="1 to 500 e-mail addresses of members, compared in any case, each once. "
        "Give this or memberIds.",
    )
    dueAt = JsonTimestampField(
        required=False,
        allow_null=True,
        help_text="When the enrolled should have completed the course: a time in the future, "
        "or null for none. It replaces the due date of those enrolled already too; left out, "
        "theirs is kept (and the newly enrolled have none).",
    )

    def validate_memberIds(self, ids: list) -> list:
        _repeats(ids, field="memberIds")
        return ids

    def validate_emails(self, emails: list) -> list:
        _repeats(emails, field="emails", key=str.lower)
        return emails

    def validate_dueAt(self, due_at):
        if due_at is not None and due_at <= timezone.now():
            raise serializers.ValidationError("Must be in the future.")
        return due_at

    def validate(self, attrs: dict) -> dict:
        given = [name for name in ("memberIds", "emails") if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {given[-1] if given else "memberIds": ["Give exactly one of memberIds and emails."]}
            )
        return attrs


class EnrolledSerializer(serializers.Serializer):
    enrolled = serializers.ListField(
        child=serializers.UUIDField(),
        help_text="The members this call enrolled, in the order given.",
    )
    alreadyEnrolled = serializers.ListField(
        source="already_enrolled",
        child=serializers.UUIDField(),
        help_text="The members who were enrolled already, in the order given (their "
        "enrolment and progress kept).",
    )


# --- the completions feed (9.6) ----------------------------------------------------------------
MAX_FEED_LIMIT = 1000
DEFAULT_FEED_LIMIT = 100


class CompletionsQuerySerializer(serializers.Serializer):
    """The feed's query: where to continue, how many, and one course or all."""

    after = FeedCursorField(
        required=False,
        help_text="The `next` of the last answer: continue after the completions it served. "
        "Left out: from the first completion.",
    )
    limit = QueryIntegerField(
        min_value=1,
        max_value=MAX_FEED_LIMIT,
        default=DEFAULT_FEED_LIMIT,
        help_text="At most this many completions.",
    )
    courseId = QueryIdField(
        source="course_id",
        required=False,
        help_text="Only this course's completions (a course of the caller's organization).",
    )


class CompletionSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The completion's id: one per course.completed event.")
    courseId = serializers.UUIDField(source="course_id")
    memberId = serializers.UUIDField(source="membership_id", help_text="The membership's id.")
    email = serializers.EmailField(help_text="The member's e-mail address.")
    completedAt = serializers.DateTimeField(
        source="completed_at",
        help_text="When the course was completed: the learner's completedAt in the course's "
        "progress.",
    )


class CompletionsSerializer(serializers.Serializer):
    rows = CompletionSerializer(
        many=True,
        help_text="In the order the completions became visible (the order of their times "
        "when they do not race); empty when there is nothing new.",
    )
    next = serializers.CharField(
        help_text="The cursor to send as `after` next time: after these rows, or the cursor "
        "sent when there are none (a first read of an empty feed answers one to poll with)."
    )


# The feed's body, built from a ``learn.wire_reads.Completions`` (ids and times wire text).
COMPLETIONS = Shape(CompletionsSerializer)


# --- a course's roster (9.4) as its CSV writes it ------------------------------------------


class RosterRowSerializer(serializers.Serializer):
    """A learner of a course's roster, with their standing in the course exactly as their own
    course progress answers it."""

    memberId = serializers.UUIDField(source="membership_id")
    email = serializers.EmailField()
    firstName = serializers.CharField(source="first_name")
    lastName = serializers.CharField(source="last_name")
    enrolledAt = serializers.DateTimeField(source="enrolled_at")
    dueAt = serializers.DateTimeField(source="due_at", allow_null=True)
    status = serializers.ChoiceField(choices=ProgressStatus.choices)
    progress = serializers.FloatField(min_value=0.0, max_value=1.0)
    completedAt = serializers.DateTimeField(source="completed_at", allow_null=True)
    lastActivityAt = serializers.DateTimeField(source="last_activity_at", allow_null=True)
    overdue = serializers.BooleanField()


# Built from ``RosterRow``s (Python values): ``ROSTER_ROW.body_of``.
ROSTER_ROW = Shape(RosterRowSerializer)

"""Input validation and output shapes of the learning area (wire names are camelCase)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from learn import completion
from learn.models import Activity, ProgressStatus
from lms.fields import StrictUUIDField
from lms.serializers import OrgScopedSerializer

MAX_REPORTS = 100
MAX_IDEMPOTENCY_KEY = 255


def _known_report(kind: str, properties: dict, note: str = "") -> dict:
    return {
        "type": "object",
        "title": f"{kind} report",
        "description": note,
        "properties": {"type": {"type": "string", "enum": [kind]}, **properties},
        "required": ["type", *properties],
    }


def _seconds(maximum: float, *, positive: bool = False) -> dict:
    schema: dict = {"type": "number", "minimum": 0, "maximum": maximum}
    if positive:
        schema["exclusiveMinimum"] = True
    return schema


# The report shapes as OpenAPI can say them; the rules across fields (from <= to <=
# duration, page <= pages, score <= maxScore) are in each description and in docs/api.md.
REPORT_SCHEMA = {
    "oneOf": [
        _known_report(
            "time", {"seconds": _seconds(completion.MAX_SECONDS_PER_REPORT, positive=True)}
        ),
        _known_report(
            "media",
            {
                "from": _seconds(completion.MAX_MEDIA_DURATION),
                "to": _seconds(completion.MAX_MEDIA_DURATION),
                "duration": _seconds(completion.MAX_MEDIA_DURATION, positive=True),
            },
            "A watched segment: from <= to <= duration.",
        ),
        _known_report(
            "page",
            {
                "page": {"type": "integer", "minimum": 1, "maximum": completion.MAX_PAGES},
                "pages": {"type": "integer", "minimum": 1, "maximum": completion.MAX_PAGES},
            },
            "A viewed page: page <= pages.",
        ),
        _known_report(
            "score",
            {
                "score": {"type": "number", "minimum": 0},
                "maxScore": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            },
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


class ProgressInputSerializer(serializers.Serializer):
    activity = StrictUUIDField(help_text="The activity's id.")
    reports = serializers.ListField(
        child=ReportField(),
        max_length=MAX_REPORTS,
        allow_empty=True,
        help_text="At most 100 report objects; may be empty (opening the activity). Known "
        "types: time, media, page, score, complete (see the API guide); others are stored and "
        "ignored.",
    )

    def validate_reports(self, reports) -> list[completion.Received]:
        """Each report as received and as read; errors keyed by position, so that the
        details read ``reports.3.seconds``."""
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


class ActivitySerializer(OrgScopedSerializer):
    moduleId = serializers.UUIDField(source="module_id", read_only=True)
    courseId = serializers.UUIDField(source="course_id", read_only=True)
    settings = serializers.JSONField(read_only=True, allow_null=True)

    class Meta:
        model = Activity
        fields = [
            "orgId",
            "id",
            "moduleId",
            "courseId",
            "seq",
            "settings",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = fields


def activity_row(fields: dict) -> dict:
    """What ``ActivitySerializer`` answers for an activity, from its ``ACTIVITY_COLUMNS``
    values by attribute name, the ids and timestamps read as wire text (``lms.wire``): the
    listing skips building a serializer per activity."""
    return {
        "orgId": fields["org_id"],
        "id": fields["id"],
        "moduleId": fields["module_id"],
        "courseId": fields["course_id"],
        "seq": fields["seq"],
        "settings": fields["settings"],
        "createdAt": fields["created_at"],
        "updatedAt": fields["updated_at"],
    }


class ActivityProgressSerializer(serializers.Serializer):
    activity = serializers.UUIDField(source="activity_id", help_text="The activity's id.")
    status = serializers.ChoiceField(
        choices=ProgressStatus.choices,
        help_text="What the last progress report answered; not-started without one.",
    )
    progress = serializers.FloatField(min_value=0.0, max_value=1.0)


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

"""Courses, their modules and activities, enrollments and learners' progress.

Every table is organization-scoped and every index and unique constraint starts with
``org`` (foreign keys get no index of their own for that reason).
"""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models, transaction
from django.db.models import Q

from learn import completion
from lms.db import statements
from lms.db.collation import CodePointOrder
from lms.json_depth import nested_too_deep
from lms.tenancy import OrgScopedModel, org_scoped_key, org_unique

MEMBERSHIP = "organizations.Membership"


def _related(instance: models.Model, name: str):
    """The object a foreign key points to, or None. On an admin add page the parent is not
    saved yet (its id is unset) but is already attached, so look at the attached object."""
    if getattr(type(instance), name).is_cached(instance):
        return getattr(instance, name)
    if getattr(instance, f"{name}_id") is not None:
        return getattr(instance, name)
    return None


class Course(OrgScopedModel):
    title = models.CharField(max_length=200)
    published = models.BooleanField(default=False)

    class Meta:
        ordering = ["title", "id"]
        indexes = [models.Index(fields=["org", "title"], name="course_org_title")]

    def __str__(self) -> str:
        return self.title


class Module(OrgScopedModel):
    """A part of a course. ``seq`` is its 1-based position in the course, kept distinct by
    the admin rather than a unique constraint, so that staff can swap two positions in one
    save; the listing breaks any tie by id."""

    course = org_scoped_key(Course, related_name="modules")
    seq = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    title = models.CharField(max_length=200)
    published = models.BooleanField(default=False)

    class Meta:
        ordering = ["seq", "id"]
        indexes = [models.Index(fields=["org", "course", "seq"], name="module_org_course_seq")]
        constraints = [models.CheckConstraint(condition=Q(seq__gte=1), name="module_seq_gte_1")]

    def __str__(self) -> str:
        return f"{self.seq}. {self.title}"

    def clean(self) -> None:
        course = _related(self, "course")
        if course is not None:
            self.org_id = course.org_id


class Activity(OrgScopedModel):
    """A piece of a module. ``course`` always equals ``module.course`` (kept for the
    listing's index); ``seq`` is its position in the module (distinct as for modules);
    ``settings`` is any JSON whose ``completion`` rule, ``duration`` and ``pages`` are
    validated by ``clean()`` (the admin's save) and read by ``completion_settings``."""

    module = org_scoped_key(Module, related_name="activities")
    course = org_scoped_key(Course, related_name="activities")
    seq = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    title = models.CharField(max_length=200, blank=True)
    settings = models.JSONField(
        null=True,
        blank=True,
        help_text='Any JSON. "completion" is the completion rule (default {"type": "view"}); '
        '"duration" (seconds) and "pages" are the lengths the media and pages rules measure '
        "against.",
    )
    published = models.BooleanField(default=False)

    class Meta:
        verbose_name_plural = "activities"
        ordering = ["seq", "id"]
        indexes = [
            # The listing: one course's activities (then joined to their modules).
            models.Index(fields=["org", "course", "published"], name="activity_org_course_pub"),
            models.Index(fields=["org", "module", "seq"], name="activity_org_module_seq"),
        ]
        constraints = [models.CheckConstraint(condition=Q(seq__gte=1), name="activity_seq_gte_1")]

    def __str__(self) -> str:
        return self.title or f"Activity {self.seq}"

    @property
    def completion_settings(self) -> completion.Settings:
        """The settings as the completion rules read them; a part stored around ``clean()``
        reads as a rule that never completes, or as no length set."""
        settings, _ = completion.read_settings(self.settings)
        return settings

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        module, course = _related(self, "module"), _related(self, "course")
        if module is not None:
            if course is None:
                course = self.course = module.course
            elif course.pk != module.course_id:
                errors["module"] = ["The module must belong to the activity's course."]
        if course is not None:
            self.org_id = course.org_id
        _, messages = completion.read_settings(self.settings)
        if messages:
            errors["settings"] = messages
        if errors:
            raise ValidationError(errors)


# What a roster's filters test, carried by each of its indexes.
_ROSTER_FILTERED = ["id", "stage", "due_at"]


def _roster_index(key, *, name: str | None = None) -> models.Index:
    """The roster's index of one sort key (a field name or an expression): ``org``,
    ``course``, the key, the member id, then what the filters test. A nullable key's
    descending order (nulls last) has an index of its own on PostgreSQL (migration 0009:
    SQLite's indexes cannot say where nulls go)."""
    name = name or key
    expression = models.F(key) if isinstance(key, str) else key
    return models.Index(
        models.F("org"),
        models.F("course"),
        expression,
        models.F("membership"),
        *(models.F(field) for field in _ROSTER_FILTERED if field != key),
        name=f"roster_{name}"[:30],
    )


class Stage(models.IntegerChoices):
    """A learner's status in a course as a number, in the order a course is gone through."""

    NOT_STARTED = 0, "Not started"
    IN_PROGRESS = 1, "In progress"
    COMPLETED = 2, "Completed"


class Enrollment(OrgScopedModel):
    """A member's enrolment in a course, made and removed by ``learn.services`` alone
    (``enroll_members``, ``unenroll``). Removing it keeps the learner's progress, so a
    re-enrolment answers what it answered before. It holds the learner's standing
    (``learn.standing`` keeps it equal to what 7.4 answers them: ``stage`` its status,
    ``done`` how many of the activities the course lists they completed, ``completed_at``
    the stored completion's time) and what the roster sorts and searches by
    (``last_activity_at``: their last progress report on an activity of the course;
    ``email_key`` the lower-cased e-mail; ``search_text`` the lower-cased e-mail, first and
    last names, joined by U+001F)."""

    Stage = Stage

    membership = org_scoped_key(MEMBERSHIP, related_name="enrollments")
    course = org_scoped_key(Course, related_name="enrollments")
    stage = models.PositiveSmallIntegerField(choices=Stage.choices, default=Stage.NOT_STARTED)
    done = models.PositiveIntegerField(default=0)
    completed_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    # When the learner should have completed the course (CONTRACT 9.3); null: no date.
    due_at = models.DateTimeField(null=True, blank=True)
    email_key = models.TextField(default="", blank=True)
    search_text = models.TextField(default="", blank=True)

    class Meta:
        constraints = [org_unique("membership", "course", name="enrollment_org_member_course")]
        indexes = [
            models.Index(fields=["org", "course"], name="enrollment_org_course"),
            # A member's courses, most recently enrolled first (GET /api/learn/courses).
            models.Index(
                fields=["org", "membership", "-created_at", "-course"],
                name="enrollment_org_member_recent",
            ),
            # A course's roster (9.4): one index per sort, read forwards or backwards, ending
            # with the member id (the final key), and carrying what the filters test, so
            # that the rows a page skips or a filter rejects are read from the index alone.
            # A nullable key's descending order has one more on PostgreSQL (nulls last both
            # ways: migration 0009). The status counts of the report read the first.
            _roster_index("stage"),
            _roster_index("created_at"),
            _roster_index("done"),
            _roster_index(CodePointOrder(models.F("email_key")), name="email"),
            _roster_index("completed_at"),
            _roster_index("due_at"),
            _roster_index("last_activity_at"),
        ]

    def __str__(self) -> str:
        return f"{self.membership.user} in {self.course}"

    def clean(self) -> None:
        course = _related(self, "course")
        if course is None:
            return
        self.org_id = course.org_id
        if self.membership_id is None:
            return
        if self.membership.org_id != self.org_id:
            raise ValidationError(
                {"membership": ["The member must belong to the course's organization."]}
            )
        # The unique constraint starts with org, which the admin form does not show, so
        # Django's own unique check would skip it.
        duplicate = Enrollment.objects.filter(
            org_id=self.org_id, membership_id=self.membership_id, course_id=self.course_id
        ).exclude(pk=self.pk)
        if duplicate.exists():
            raise ValidationError("This member is already enrolled in this course.")


class ProgressStatus(models.TextChoices):
    NOT_STARTED = completion.NOT_STARTED, "Not started"
    IN_PROGRESS = completion.IN_PROGRESS, "In progress"
    COMPLETED = completion.COMPLETED, "Completed"


class Progress(OrgScopedModel):
    """One learner's progress on one activity: created by the first report (race-free, on
    the unique constraint), locked by every later one. ``state`` is the aggregate of all
    reports that ``learn.completion`` folds into; the status never regresses from completed.
    """

    Status = ProgressStatus

    membership = org_scoped_key(MEMBERSHIP, related_name="progress")
    # Nothing a learner sent is lost: an activity with progress cannot be deleted (unpublish it).
    activity = org_scoped_key(Activity, related_name="progress", on_delete=models.PROTECT)
    status = models.CharField(
        max_length=20, choices=ProgressStatus.choices, default=ProgressStatus.IN_PROGRESS
    )
    progress = models.FloatField(default=0.0)
    state = models.JSONField(default=completion.empty_state)
    started_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "progress"
        constraints = [
            org_unique("membership", "activity", name="progress_org_member_activity"),
            models.CheckConstraint(
                condition=Q(progress__gte=0) & Q(progress__lte=1), name="progress_fraction"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ProgressStatus.values), name="progress_status"
            ),
        ]
        indexes = [models.Index(fields=["org", "activity"], name="progress_org_activity")]

    def __str__(self) -> str:
        return f"{self.membership.user} on {self.activity}: {self.status}"


class JsonTextField(models.TextField):
    """Any JSON value, stored as its ASCII JSON text.

    PostgreSQL's jsonb refuses some valid JSON (a NUL character, a lone surrogate escape);
    text keeps every JSON document exactly, so a report is stored as received on every
    database."""

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if nested_too_deep(value):
            # Stored before the request parser had its nesting limit: kept as its text, which
            # every reader (the admin first) can show, where a decoded copy could not be.
            return value
        return json.loads(value)

    def to_python(self, value):
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value

    def get_prep_value(self, value):
        if value is None:
            return None
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"))

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))


class ProgressReport(OrgScopedModel):
    """A report exactly as received (append-only), with the request it came in."""

    progress = org_scoped_key(Progress, related_name="reports")
    position = models.PositiveSmallIntegerField(help_text="Index within its request.")
    type = models.CharField(max_length=100, blank=True)
    payload = JsonTextField(help_text="The report as received, as JSON text.")
    request_id = models.CharField(max_length=128)

    class Meta:
        ordering = ["created_at", "position"]
        indexes = [
            models.Index(
                fields=["org", "progress", "created_at", "position"], name="report_org_progress"
            )
        ]

    def __str__(self) -> str:
        return f"{self.type or 'report'} at {self.created_at:%Y-%m-%d %H:%M:%S}"


class CourseCompletion(OrgScopedModel):
    """A learner completed a course: every activity the course listed was completed at
    ``completed_at`` (the ``course.completed`` event). Written once, under the learner's
    enrollment lock, and never removed by later changes to the course (nor by an
    unenrolment): it latches.

    ``position`` is its place in the organization's completions feed (9.6): given by the
    organization's ``CompletionSequence`` as the completing transaction's last write, so a
    completion with a higher position never becomes visible before one with a lower
    (``learn.course_completion``)."""

    membership = org_scoped_key(MEMBERSHIP, related_name="course_completions")
    course = org_scoped_key(Course, related_name="completions")
    completed_at = models.DateTimeField()
    position = models.BigIntegerField(editable=False)

    class Meta:
        constraints = [
            org_unique("membership", "course", name="completion_org_member_course"),
            # The feed, in the order its cursor serves (and the sequence's backstop).
            org_unique("position", name="completion_org_position"),
        ]
        # The feed of one course (``courseId``); also every read of a course's completions.
        indexes = [
            models.Index(fields=["org", "course", "position"], name="completion_org_course_pos")
        ]

    def __str__(self) -> str:
        return f"{self.membership.user} completed {self.course}"

    def save(self, *args, **kwargs) -> None:
        """A completion made without a feed position (a fixture, a script) takes the next
        one of its organization, in the same transaction as its row."""
        if self.position is not None:
            return super().save(*args, **kwargs)
        with transaction.atomic(using=kwargs.get("using")):
            self.position = statements.next_number(
                CompletionSequence, org_id=self.org_id, counter="last"
            )
            return super().save(*args, **kwargs)


class CompletionSequence(OrgScopedModel):
    """The last completions-feed position an organization gave (``CourseCompletion.position``):
    one row per organization, taken with ``INSERT ... ON CONFLICT DO UPDATE`` (its row lock
    held until the completing transaction commits, so positions commit in their order)."""

    last = models.BigIntegerField(default=0)

    class Meta:
        constraints = [org_unique(name="completion_sequence_org")]

    def __str__(self) -> str:
        return f"completions feed at {self.last}"


class ActivityFunnel(OrgScopedModel):
    """How many of the learners enrolled now in the activity's course have started it (they
    have a progress row on it) and completed it: 9.5's funnel, kept by ``learn.standing``
    (added to by progress reports and enrolments, taken from by unenrolments). One row an
    activity, made by its first count."""

    activity = org_scoped_key(Activity, related_name="+")
    started = models.IntegerField(default=0)
    completed = models.IntegerField(default=0)

    class Meta:
        constraints = [org_unique("activity", name="funnel_org_activity")]

    def __str__(self) -> str:
        return f"{self.activity}: {self.started} started, {self.completed} completed"

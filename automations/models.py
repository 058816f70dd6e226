"""Automations: when a trigger fires in an organization, run an ordered list of actions."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, router, transaction
from django.db.models import Q
from django.db.models.base import DEFERRED

from automations.definition import check_definition, trigger_room_problems
from automations.registry import TRIGGERS, describe_problem
from lms.tenancy import OrgScopedModel


def new_signing_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and the base64 of 32 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def definition_problem(path: str, message: str, actions) -> ValidationError:
    """A problem of a definition at wire path ``path`` as model validation reports it: the
    sentence ``registry.describe_problem`` writes, with ``params`` holding ``path`` and the
    problem (``message``), so that a reader places it by its path, not by its wording."""
    sentence = describe_problem(path, message, actions)
    # A message with params is %-formatted with them when read: a "%" it quotes stays one.
    return ValidationError(
        sentence.replace("%", "%%"), code="definition", params={"path": path, "problem": message}
    )


# What staff change; a save writes those that changed (``Automation.changed_fields``).
EDITABLE = ("name", "description", "trigger", "actions", "conditions", "enabled")


class Automation(OrgScopedModel):
    """``trigger`` and every action in ``actions`` (an ordered list of ``{type, input}``)
    are valid against ``automations.registry``: model validation (``full_clean``) refuses
    anything else, and the admin and ``services.save_automation`` both run it before
    saving. The actions are stored as one JSON list, so reading an automation is one query.

    ``revision`` is the immutable snapshot of those actions that runs refer to
    (``AutomationRevision``): saving the automation with actions it has not had before
    writes a new one, so an event's runs use the actions as they were when it happened
    without copying them."""

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    trigger = models.CharField(max_length=64)
    actions = models.JSONField(default=list)
    # Which of the trigger's events run it (CONTRACT 8.7): ``{}`` (every one), or
    # ``courseIds`` / ``activityIds`` lists of the organization's ids, lower-case
    # (``registry.CONDITIONS``); matched in SQL where an event finds its automations.
    conditions = models.JSONField(default=dict, blank=True)
    enabled = models.BooleanField(default=True)
    # Signs the automation's webhooks; shown once, when the automation is created over the API.
    signing_secret = models.CharField(max_length=64, default=new_signing_secret, editable=False)
    # The secret before the last rotation, and when that was: deliveries are signed with both
    # for LMS_WEBHOOK_SECRET_OVERLAP_SECONDS after it (CONTRACT 8.8).
    previous_signing_secret = models.CharField(
        max_length=64, blank=True, default="", editable=False
    )
    secret_rotated_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The secret before that, and when it was replaced, while that replacement's overlap
    # lasts: two rotations within the overlap (a double click) keep all three signing.
    older_signing_secret = models.CharField(max_length=64, blank=True, default="", editable=False)
    older_rotated_at = models.DateTimeField(null=True, blank=True, editable=False)
    revision = models.ForeignKey(
        "AutomationRevision",
        null=True,
        editable=False,
        on_delete=models.DO_NOTHING,  # deleted with the automation, never alone while current
        related_name="+",
        db_index=False,
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "name"], name="automation_org_name_unique"),
        ]
        indexes = [
            # What runs when a trigger fires in an organization.
            models.Index(
                fields=["org", "trigger"], name="automation_org_trigger", condition=Q(enabled=True)
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def signing_secrets(self, now) -> list[str]:
        """The secrets a delivery at ``now`` is signed with: the current one, then each one
        replaced less than the overlap ago, newest first (three at most)."""
        replaced = [
            (self.previous_signing_secret, self.secret_rotated_at),
            (self.older_signing_secret, self.older_rotated_at),
        ]
        return [self.signing_secret] + [
            secret for secret, at in replaced if secret and self._in_overlap(at, now)
        ]

    @staticmethod
    def _in_overlap(replaced_at, now) -> bool:
        overlap = settings.LMS_WEBHOOK_SECRET_OVERLAP_SECONDS
        return replaced_at is not None and (now - replaced_at).total_seconds() < overlap

    def rotate_secret(self, now) -> None:
        """A new current secret; the one it replaces signs for the overlap from ``now``, and
        so does the one before it while its own overlap lasts."""
        if self.previous_signing_secret and self._in_overlap(self.secret_rotated_at, now):
            self.older_signing_secret = self.previous_signing_secret
            self.older_rotated_at = self.secret_rotated_at
        else:
            self.older_signing_secret, self.older_rotated_at = "", None
        self.previous_signing_secret = self.signing_secret
        self.signing_secret = new_signing_secret()
        self.secret_rotated_at = now

    @classmethod
    def from_db(cls, db, field_names, values):
        instance = super().from_db(db, field_names, values)
        instance._remember_stored(EDITABLE)
        return instance

    def changed_fields(self) -> list[str]:
        """The editable fields whose value differs from the stored one (every one when the
        automation is new): what a save writes, and nothing else (never the secret)."""
        stored = getattr(self, "_stored", None)
        if self._state.adding or stored is None:
            return list(EDITABLE)
        return [name for name in EDITABLE if getattr(self, name) != stored[name]]

    def _remember_stored(self, names) -> None:
        """The values as stored (read, or written by a save; a field not read is DEFERRED):
        what a save must write, whether a change takes a place among its trigger's enabled
        automations, and whether the actions still are those of ``revision``. Deep copies
        of the lists and dicts only (their strings are shared): cheap, and safe from edits
        in place."""
        stored = getattr(self, "_stored", None) or {}
        for name in names:
            stored[name] = copy.deepcopy(self.__dict__.get(name, DEFERRED))
        self._stored = stored

    def room_field(self) -> str | None:
        """The field that takes this automation into its trigger's enabled ones (contract
        8.9), when saving it would: ``trigger`` for a new automation or a new trigger,
        ``enabled`` when it is enabled again; None when it takes no new place."""
        if not self.enabled or self.org_id is None or self.trigger not in TRIGGERS:
            return None
        stored = getattr(self, "_stored", None) or {}
        if self._state.adding or stored.get("trigger") != self.trigger:
            return "trigger"
        return None if stored.get("enabled") is True else "enabled"

    def clean(self) -> None:
        super().clean()
        field = self.room_field()
        if field is not None:
            problems = trigger_room_problems(
                org_id=self.org_id,
                trigger=self.trigger,
                exclude_id=None if self._state.adding else self.id,
                field=field,
            )
            if problems:
                raise ValidationError(problems)

    def clean_fields(self, exclude=None) -> None:
        """The fields' own checks, then the definition's (``check_definition``: the registry,
        then the courses of enroll_in_course), once; a valid one is kept as ``definition``
        for ``save_automation``. Per field rather than in clean() so that a field the
        admin's form could not even parse (``exclude``) is not reported a second time.

        Each problem of the definition is one error under its field (``actions``) that
        reads as a sentence for a person (``registry.describe_problem``) and keeps, in its
        ``params``, the wire path it is about (``actions.1.input.subject``) and the problem
        itself: what the admin's form places beside the input with that path."""
        errors: dict[str, list] = {}
        try:
            super().clean_fields(exclude=exclude)
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)
        skip = set(exclude or ()) | set(errors)
        if {"trigger", "actions"} <= set(exclude or ()):
            if errors:
                raise ValidationError(errors)
            return  # validated before, at the edge (save_automation's Definition)
        self.definition, problems = check_definition(
            org_id=self.org_id,
            trigger=self.trigger,
            actions=self.actions,
            conditions=self.conditions,
        )
        for path, messages in problems.items():
            field = path.split(".", 1)[0]
            if field == "conditions" and "conditions" in skip:
                field = "__all__"  # a form without the field still hears why
            if field not in skip:
                errors.setdefault(field, []).extend(
                    definition_problem(path, message, self.actions) for message in messages
                )
        if errors:
            raise ValidationError(errors)

    def save(self, *args, **kwargs) -> None:
        """Saves the automation and, when its actions changed, the revision of the new ones
        (in one transaction: the revision row may come first, as foreign keys are checked
        at the commit). Actions as loaded keep their revision without a query."""
        update_fields = kwargs.get("update_fields")
        stored = getattr(self, "_stored", None) or {}
        unchanged = self.revision_id is not None and self.actions == stored.get("actions")
        if unchanged or (update_fields is not None and "actions" not in update_fields):
            super().save(*args, **kwargs)
        else:
            using = kwargs.get("using") or router.db_for_write(type(self), instance=self)
            with transaction.atomic(using=using, savepoint=False):
                self.revision_id = AutomationRevision.of(self, using=using)
                if update_fields is not None:
                    kwargs["update_fields"] = {*update_fields, "revision"}
                super().save(*args, **kwargs)
        self._remember_stored(
            EDITABLE if update_fields is None else set(update_fields) & set(EDITABLE)
        )


class AutomationRevision(OrgScopedModel):
    """The actions of an automation as they were once saved, never changed afterwards: what
    its runs perform. One per distinct list of actions of the automation (``digest``), so
    saving a name or toggling ``enabled`` writes none. Bounded by the limits of an
    automation (CONTRACT 8.9), and written by staff's saves alone, never by a learner's
    request. ``types`` is the actions' types in order: what a run's outcome lists without
    reading the inputs."""

    automation = models.ForeignKey(
        Automation, on_delete=models.CASCADE, related_name="revisions", db_index=False
    )
    digest = models.CharField(max_length=64)
    actions = models.JSONField(default=list)
    types = models.JSONField(default=list)

    class Meta:
        constraints = [
            # Not led by ``org``: revisions are reached through their automation alone, and
            # deleting one finds them by it.
            models.UniqueConstraint(
                fields=["automation", "digest"], name="automation_revision_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.digest[:12]} of {self.automation_id}"

    @staticmethod
    def digest_of(actions: list) -> str:
        text = json.dumps(actions, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    @classmethod
    def of(cls, automation: Automation, *, using: str) -> object:
        """The id of the revision of ``automation``'s current actions, written if new (one
        query to find it, one more to write it)."""
        digest = cls.digest_of(automation.actions)
        rows = cls.all_orgs.using(using)
        if not automation._state.adding or automation._state.db is not None:
            found = (
                rows.filter(org_id=automation.org_id, automation_id=automation.pk, digest=digest)
                .values_list("id", flat=True)
                .first()
            )
            if found is not None:
                return found
        actions = automation.actions
        types = [a.get("type") if isinstance(a, dict) else None for a in actions or []]
        revision = cls(
            org_id=automation.org_id,
            automation_id=automation.pk,
            digest=digest,
            actions=actions,
            types=types,
        )
        revision.save(using=using, force_insert=True)
        return revision.id


class AutomationRun(OrgScopedModel):
    """One execution of an automation for one event (at most one per automation and event).

    ``revision`` is the automation's actions as they were when the event happened; each
    action's outcome is an ``AutomationRunAction`` row, written by the worker when it first
    attempts the action (an action without one is still pending), so that recording a run
    writes this row alone and an attempt updates its action's row alone. ``due_at`` is when
    a worker may next take the run: its creation, the time of its next attempt, or, while a
    worker holds it, the end of that worker's lease. ``enqueued_at`` is when it was last
    handed to the task queue and not yet taken by a worker since (null once taken). A
    pending or running run whose ``due_at`` passed long ago lost its hand-off to the worker
    (a process died) and is enqueued again by the sweep."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    automation = models.ForeignKey(
        Automation, on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    revision = models.ForeignKey(
        AutomationRevision,
        on_delete=models.DO_NOTHING,  # deleted with the automation, as the runs are
        related_name="+",
        db_index=False,
    )
    trigger = models.CharField(max_length=64)
    event_id = models.UUIDField()
    occurred_at = models.DateTimeField()
    event_data = models.JSONField(default=dict)
    depth = models.PositiveSmallIntegerField(default=0)
    # A test send (CONTRACT 8.8): its event is an example, its e-mails go to the member who
    # asked for it (``tested_by``, a membership's id), and it enrolls nobody.
    test = models.BooleanField(default=False)
    tested_by = models.UUIDField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    due_at = models.DateTimeField()
    enqueued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["org", "automation", "event_id"], name="automation_run_once_per_event"
            ),
        ]
        indexes = [
            # An automation's runs, newest first.
            models.Index(
                fields=["org", "automation", "-created_at", "-id"], name="automation_run_newest"
            ),
            # What the sweep looks for: unfinished runs by when they are due.
            models.Index(
                fields=["org", "due_at"],
                name="automation_run_unfinished",
                condition=Q(status__in=["pending", "running"]),
            ),
            # What a worker takes: the earliest due new run, or the earliest due retry.
            models.Index(
                fields=["status", "due_at"],
                name="automation_run_due",
                condition=Q(status__in=["pending", "running"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.trigger} run of {self.automation_id}"

    def outcomes(self) -> list[dict]:
        """Each action's outcome in the run's wire shape (``{"type", "status", "attempts",
        "lastError", "response"}``), in order: from the revision's types and the action
        rows (prefetched by a list, as ``action_states``), never the inputs."""
        states = {state.index: state for state in self.action_states.all()}
        return [
            AutomationRunAction.outcome(kind, states.get(index))
            for index, kind in enumerate(self.revision.types)
        ]

    @property
    def actions(self) -> list[dict]:
        """Each action with its input and outcome: ``{"type", "input", "status", ...}``
        (reads the revision's inputs: for the worker and a run's own page, not lists)."""
        outcomes = self.outcomes()
        return [
            {"type": action["type"], "input": action["input"], **outcome}
            for action, outcome in zip(self.revision.actions, outcomes, strict=True)
        ]


class AutomationRunAction(OrgScopedModel):
    """The outcome of one action of a run (``index`` in its revision's actions), written
    when the worker first attempts it and updated by each attempt; an action without a row
    is pending. ``response`` is a webhook's answer (``{"status", "durationMs", "body"}``)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        SKIPPED = "skipped"

    run = models.ForeignKey(
        AutomationRun, on_delete=models.CASCADE, related_name="action_states", db_index=False
    )
    index = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    response = models.JSONField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # Not led by ``org``: the rows are reached through their run alone (a page of
            # runs, the worker, deleting runs).
            models.UniqueConstraint(fields=["run", "index"], name="automation_run_action_once"),
        ]

    def __str__(self) -> str:
        return f"action {self.index} of run {self.run_id}"

    @staticmethod
    def outcome(kind: str, state: AutomationRunAction | None) -> dict:
        if state is None:
            return {
                "type": kind,
                "status": "pending",
                "attempts": 0,
                "lastError": None,
                "response": None,
            }
        return {
            "type": kind,
            "status": state.status,
            "attempts": state.attempts,
            "lastError": state.last_error or None,
            "response": state.response,
        }

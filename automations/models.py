"""Automations: when a trigger fires in an organization, run an ordered list of actions."""

import base64
import secrets

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.base import DEFERRED

from automations.definition import check_definition, trigger_room_problems
from automations.registry import TRIGGERS, describe_problem
from lms.tenancy import OrgScopedModel


def new_signing_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and the base64 of 32 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


# What staff change; a save writes those that changed (``Automation.changed_fields``).
EDITABLE = ("name", "description", "trigger", "actions", "enabled")


class Automation(OrgScopedModel):
    """``trigger`` and every action in ``actions`` (an ordered list of ``{type, input}``)
    are valid against ``automations.registry``: model validation (``full_clean``) refuses
    anything else, and the admin and ``services.save_automation`` both run it before
    saving. The actions are stored as one JSON list, so reading an automation is one query."""

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    trigger = models.CharField(max_length=64)
    actions = models.JSONField(default=list)
    enabled = models.BooleanField(default=True)
    # Signs the automation's webhooks; shown once, when the automation is created over the API.
    signing_secret = models.CharField(max_length=64, default=new_signing_secret, editable=False)

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

    @classmethod
    def from_db(cls, db, field_names, values):
        instance = super().from_db(db, field_names, values)
        # The values as stored (those read): what a save must write, and whether a change
        # takes a place among its trigger's enabled automations.
        instance._stored = {name: instance.__dict__.get(name, DEFERRED) for name in EDITABLE}
        return instance

    def changed_fields(self) -> list[str]:
        """The editable fields whose value differs from the stored one (every one when the
        automation is new): what a save writes, and nothing else (never the secret)."""
        stored = getattr(self, "_stored", None)
        if self._state.adding or stored is None:
            return list(EDITABLE)
        return [name for name in EDITABLE if getattr(self, name) != stored[name]]

    def mark_stored(self) -> None:
        self._stored = {name: getattr(self, name) for name in EDITABLE}

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
        admin's form could not even parse (``exclude``) is not reported a second time."""
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
            org_id=self.org_id, trigger=self.trigger, actions=self.actions
        )
        for path, messages in problems.items():
            field = path.split(".", 1)[0]
            if field not in skip:
                errors.setdefault(field, []).extend(
                    describe_problem(path, message, self.actions) for message in messages
                )
        if errors:
            raise ValidationError(errors)


class AutomationRun(OrgScopedModel):
    """One execution of an automation for one event (at most one per automation and event).

    ``actions`` is the automation's list as it was when the event happened, each entry with
    its own outcome: ``{"type", "input", "status", "attempts", "lastError", "response"}``.
    ``due_at`` is when a worker may next take the run: its creation, the time of its next
    attempt, or, while a worker holds it, the end of that worker's lease. A pending or
    running run whose ``due_at`` passed long ago lost its hand-off to the worker (a process
    died) and is enqueued again by the sweep."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    automation = models.ForeignKey(
        Automation, on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    trigger = models.CharField(max_length=64)
    event_id = models.UUIDField()
    occurred_at = models.DateTimeField()
    event_data = models.JSONField(default=dict)
    depth = models.PositiveSmallIntegerField(default=0)
    actions = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    due_at = models.DateTimeField()
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
        ]

    def __str__(self) -> str:
        return f"{self.trigger} run of {self.automation_id}"

"""Writes of automations."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from automations import queue
from automations.definition import Definition, check_definition
from automations.models import Automation, AutomationRun
from automations.runs import retry_run as start_again
from automations.runs import revision_of
from automations.selectors import example_event_data, membership_id_of
from lms.db.integrity import UniqueRefusal
from lms.errors import Conflict, Throttled
from lms.ids import uuid7
from lms.tenancy import get_or_404
from organizations.api import Organization, take_slot


def definition_or_error(
    *, org_id, trigger: Any, actions: Any, conditions: Any = None
) -> Definition:
    """The valid definition, else a ValidationError that names each offending value by its
    wire path (``trigger``, ``actions.1.type``, ``actions.0.input.url``,
    ``conditions.courseIds.0``)."""
    definition, problems = check_definition(
        org_id=org_id, trigger=trigger, actions=actions, conditions=conditions
    )
    if definition is None:
        raise DjangoValidationError(problems)
    return definition


@transaction.atomic
def save_automation(
    *,
    org: Organization,
    name: str,
    trigger: str | None = None,
    actions: list[dict[str, Any]] | None = None,
    conditions: dict[str, Any] | None = None,
    definition: Definition | None = None,
    description: str = "",
    enabled: bool = True,
    instance: Automation | None = None,
) -> Automation:
    """Create an automation, or update ``instance``, with ``definition`` (validated at the
    edge: the API's serializer, or the admin's model validation, which leaves it on the
    instance). Without one, ``trigger``, ``actions`` and ``conditions`` (None: the
    instance's, or none) are validated here, as the same ``check_definition`` does. The
    other fields get the model's own validation, whose problems leave as Django's
    ``ValidationError`` keyed by Python field names (``lms.errors.WIRE_NAMES`` names them
    at the edge). A name taken in the organization is a Conflict naming ``name`` (contract
    7.1), also when another request takes it meanwhile.

    Only the fields that changed are written: the statement of an update never carries
    the signing secret (a failing one is logged by the database, values and all)."""
    if definition is None:
        if conditions is None:
            conditions = getattr(instance, "conditions", None) or {}
        validated = getattr(instance, "definition", None)
        if validated is not None and validated.describes(trigger, actions, conditions):
            definition = validated
        else:
            definition = definition_or_error(
                org_id=org.id, trigger=trigger, actions=actions, conditions=conditions
            )
    automation = instance or Automation()
    automation.org = org
    automation.name = name
    automation.description = description
    automation.trigger = definition.trigger
    automation.actions = definition.actions
    automation.conditions = definition.conditions
    automation.enabled = enabled
    changed = automation.changed_fields()
    if not changed:
        return automation
    if "name" in changed or automation.room_field() is not None:
        # Checking the name is free and taking it, or counting the trigger's enabled
        # automations and adding one, is one step: concurrent creates, renames and writes
        # that take a place wait for each other, so a name race never reaches the unique
        # index (whose refusal the database logs with the statement).
        Organization.objects.select_for_update().filter(id=org.id).values_list("id").get()
    if "name" in changed:
        _check_name_free(
            org=org, name=name, exclude=None if automation._state.adding else automation.id
        )
    # The name's uniqueness is checked above and by the database (below); the id is new.
    automation.full_clean(
        exclude=["trigger", "actions", "revision"],
        validate_unique=False,
        validate_constraints=False,
    )
    try:
        if automation._state.adding:
            automation.save()  # and the revision of its actions when they are new to it
        else:
            automation.save(update_fields=[*changed, "updated_at"])
    except IntegrityError as exc:
        # Another request took the name between the check and this write (PostgreSQL's
        # unique index waits for it to commit, then refuses this row).
        if _is_name_clash(exc):
            raise _name_taken() from None
        raise
    return automation


def create_automation(
    *, org: Organization, name: str, definition: Definition, description: str, enabled: bool
) -> Automation:
    """A new automation of ``definition`` (its trigger, actions and conditions)."""
    return save_automation(
        org=org, name=name, definition=definition, description=description, enabled=enabled
    )


@transaction.atomic
def update_automation(
    *, org: Organization, automation_id: uuid.UUID, changes: dict[str, Any]
) -> Automation:
    """Apply ``changes`` (wire names, validated at the edge except the definition, which
    depends on the record: the trigger and actions it ends up with are checked together).
    Unknown or foreign automation: NotFound. The row is locked while it changes."""
    automation = get_or_404(Automation.objects.for_org(org).select_for_update(), id=automation_id)
    trigger = changes.get("trigger", automation.trigger)
    actions = changes.get("actions", automation.actions)
    # Conditions sent replace the whole object (CONTRACT 8.7); kept ones are checked against
    # a new trigger.
    conditions = changes.get("conditions", automation.conditions)
    definition = definition_or_error(
        org_id=org.id, trigger=trigger, actions=actions, conditions=conditions
    )
    return save_automation(
        org=org,
        name=changes.get("name", automation.name),
        definition=definition,
        description=changes.get("description", automation.description),
        enabled=changes.get("enabled", automation.enabled),
        instance=automation,
    )


@transaction.atomic
def rotate_secret(*, org: Organization, automation_id: uuid.UUID) -> str:
    """Give the automation a new signing secret and answer it (CONTRACT 8.8: shown this
    once). The one it replaces is kept, with the time of the rotation: deliveries carry
    both signatures for ``LMS_WEBHOOK_SECRET_OVERLAP_SECONDS``, and a third while the one
    before is still inside its own overlap (``Automation.rotate_secret``). Unknown or foreign
    automation: NotFound. The row is locked, so two rotations at once keep each other's
    secret as the previous one, in order."""
    automation = get_or_404(Automation.objects.for_org(org).select_for_update(), id=automation_id)
    automation.rotate_secret(timezone.now())
    automation.save(
        update_fields=[
            "signing_secret",
            "previous_signing_secret",
            "secret_rotated_at",
            "older_signing_secret",
            "older_rotated_at",
            "updated_at",
        ]
    )
    return automation.signing_secret


@transaction.atomic
def send_test(*, org: Organization, automation_id: uuid.UUID, caller) -> AutomationRun:
    """Record a run of the automation for a test event (CONTRACT 8.8), enabled or not, and
    hand it to the worker after the commit, as an event's runs are. ``caller`` is the
    Membership that asks (the API's), or a staff User (the admin's; its membership of the
    organization, if any, is the one to pass): the example event's member, to whose
    address its e-mails go. Its enrolments are skipped. Unknown or foreign automation:
    NotFound. Beyond ``LMS_TEST_SENDS_PER_MINUTE`` test sends of the organization in the
    last 60 seconds (counted in the store every server process shares): Throttled, with
    the seconds to wait, and nothing recorded."""
    automation = get_or_404(Automation.objects.for_org(org), id=automation_id)
    wait = take_slot("test_send", str(org.id), limit=settings.LMS_TEST_SENDS_PER_MINUTE, window=60)
    if wait is not None:
        raise Throttled(wait=wait)
    now = timezone.now()
    run = AutomationRun(
        org=org,
        automation=automation,
        revision_id=automation.revision_id or revision_of(org.id, automation.id),
        trigger=automation.trigger,
        event_id=uuid7(),
        occurred_at=now,
        event_data=example_event_data(org=org, automation=automation, caller=caller),
        test=True,
        tested_by=membership_id_of(caller),
        due_at=now,
        enqueued_at=now,  # by the hand-off, right after the commit
    )
    run.save(force_insert=True)
    run_ids = [str(run.id)]
    transaction.on_commit(lambda: queue.start_runs(run_ids), robust=True)
    return run


def retry_run(*, org: Organization, automation_id: uuid.UUID, run_id: uuid.UUID) -> AutomationRun:
    """Run a failed run of the automation again from its first action that did not succeed
    (CONTRACT 8.8; ``automations.runs.retry_run``), the webhooks keeping their
    ``webhook-id``. Unknown or foreign automation or run: NotFound; a run that is not
    failed: Conflict. The run row is locked, so that two retries at once start it once."""
    with transaction.atomic():
        automation = get_or_404(Automation.objects.for_org(org).only("id"), id=automation_id)
        run = get_or_404(
            AutomationRun.objects.for_org(org)
            .filter(automation_id=automation.id)
            .select_related("revision")
            .defer("revision__actions")
            .select_for_update(of=("self",)),
            id=run_id,
        )
        if run.status != AutomationRun.Status.FAILED:
            raise Conflict(f"Only a failed run can be retried; this one is {run.status}.")
        start_again(run)
    return run


@transaction.atomic
def delete_automation(*, org: Organization, automation_id: uuid.UUID) -> None:
    """Delete the automation and its runs. Unknown or foreign automation: NotFound."""
    automation = get_or_404(Automation.objects.for_org(org).only("id"), id=automation_id)
    AutomationRun.objects.for_org(org).filter(automation=automation).delete()
    automation.delete()


def _check_name_free(*, org: Organization, name: str, exclude: uuid.UUID | None = None) -> None:
    taken = Automation.objects.for_org(org).filter(name=name)
    if exclude is not None:
        taken = taken.exclude(id=exclude)
    if taken.exists():
        raise _name_taken()


def _name_taken() -> Conflict:
    return Conflict(
        "Another automation of the organization has this name.",
        details={"name": ["Another automation of the organization has this name."]},
    )


# The organization's unique name refusing a row that another request named first.
_is_name_clash = UniqueRefusal(Automation, ["automation_org_name_unique"])

"""Writes of automations."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction

from automations.models import Automation
from automations.registry import validate_automation
from lms.errors import validation_error
from organizations.models import Organization


@transaction.atomic
def save_automation(
    *,
    org: Organization,
    name: str,
    trigger: str,
    actions: list[dict[str, Any]],
    description: str = "",
    enabled: bool = True,
    instance: Automation | None = None,
) -> Automation:
    """Create an automation, or update ``instance``, once it is valid against the registry
    (the same validation the admin's form runs). Problems are a validation_error whose
    details name each offending value by wire path (``actions.1.input.subject``)."""
    problems = validate_automation(trigger, actions)
    if problems:
        raise validation_error(problems)
    automation = instance or Automation()
    automation.org = org
    automation.name = name
    automation.description = description
    automation.trigger = trigger
    automation.actions = actions
    automation.enabled = enabled
    try:
        automation.full_clean()
    except DjangoValidationError as exc:
        raise validation_error(
            {
                "nonFieldErrors" if field == "__all__" else field: list(messages)
                for field, messages in exc.message_dict.items()
            }
        ) from None
    automation.save()
    return automation

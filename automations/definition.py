"""An automation's definition (its trigger and ordered actions), validated once.

``check_definition`` is the one validation: the registry's, then what the registry cannot
know (an ``enroll_in_course`` course is of the automation's own organization). It answers
the problems keyed by wire path, or a ``Definition``: the typed value that the API's
serializer and the admin's model validation hand inward, which ``save_automation`` trusts
without validating it again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.conf import settings

from automations.registry import (
    CONDITIONS,
    Problems,
    normalized_actions,
    normalized_conditions,
    validate_automation,
    validate_conditions,
)
from learn.api import Course
from lms.ids import parse_id


@dataclass(frozen=True)
class Definition:
    """The trigger, the actions and the conditions as stored (ids lower-case); ``given`` is
    the actions as they were given, which ``describes`` compares with."""

    trigger: str
    actions: list[dict[str, Any]]
    given: list[dict[str, Any]]
    conditions: dict[str, list[str]]

    def describes(self, trigger: Any, actions: Any, conditions: Any) -> bool:
        return (
            self.trigger == trigger
            and (actions == self.given or actions == self.actions)
            and conditions == self.conditions
        )


def check_definition(
    *, org_id: uuid.UUID | None, trigger: Any, actions: Any, conditions: Any = None
) -> tuple[Definition | None, Problems]:
    """(the definition, {}) when valid, else (None, problems by wire path). Without an
    organization (not chosen yet in a form) the courses and activities are not checked, and
    no definition is answered. ``conditions`` None is none (``{}``)."""
    if conditions is None:
        conditions = {}
    problems = {**validate_automation(trigger, actions), **validate_conditions(conditions, trigger)}
    if problems or org_id is None:
        return None, problems
    problems = {**_foreign_courses(org_id, actions), **_foreign_condition_ids(org_id, conditions)}
    if problems:
        return None, problems
    return (
        Definition(
            trigger, normalized_actions(actions), actions, normalized_conditions(conditions)
        ),
        {},
    )


def _foreign_condition_ids(org_id: uuid.UUID, conditions: dict[str, list]) -> Problems:
    """Each id of the conditions that is no record of the organization (one query per key
    given), by wire path (``conditions.courseIds.0``)."""
    problems: Problems = {}
    for key, ids in normalized_conditions(conditions).items():
        condition = CONDITIONS[key]
        model = apps.get_model(condition.model)
        found = {
            str(found_id)
            for found_id in model.objects.filter(org_id=org_id, id__in=ids).values_list(
                "id", flat=True
            )
        }
        for index, value in enumerate(conditions[key]):
            if str(parse_id(value)) not in found:
                problems[f"conditions.{key}.{index}"] = [
                    f"No {condition.noun} with this id in the automation's organization."
                ]
    return problems


def trigger_room_problems(
    *, org_id: uuid.UUID, trigger: str, exclude_id: uuid.UUID | None, field: str
) -> Problems:
    """CONTRACT 8.9: at most ``LMS_AUTOMATIONS_PER_TRIGGER`` enabled automations of one
    organization have one trigger. What a create, or a change that enables an automation or
    moves it to another trigger, may not exceed; ``{field: [why]}`` when it would."""
    # The model by its label: automations.models validates with this module, so it cannot be
    # imported here.
    Automation = apps.get_model("automations", "Automation")
    limit = settings.LMS_AUTOMATIONS_PER_TRIGGER
    others = Automation.objects.for_org(org_id).filter(trigger=trigger, enabled=True)
    if exclude_id is not None:
        others = others.exclude(id=exclude_id)
    if others[:limit].count() < limit:
        return {}
    return {
        field: [
            f"At most {limit} enabled automations of an organization may have one trigger; "
            f"{trigger} has {limit} already. Disable or delete one first."
        ]
    }


def _foreign_courses(org_id: uuid.UUID, actions: list[dict]) -> Problems:
    wanted = {
        index: str(action["input"]["courseId"]).lower()
        for index, action in enumerate(actions)
        if action["type"] == "enroll_in_course"
    }
    if not wanted:
        return {}
    found = {
        str(course_id)
        for course_id in Course.objects.filter(
            org_id=org_id, id__in=set(wanted.values())
        ).values_list("id", flat=True)
    }
    return {
        f"actions.{index}.input.courseId": [
            "No course with this id in the automation's organization."
        ]
        for index, course_id in wanted.items()
        if course_id not in found
    }

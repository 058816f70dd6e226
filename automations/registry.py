"""The triggers and action types the product knows, and the schema of each action's input.

An automation is valid when its trigger is named here and each action is an object
``{"type": <an action type here>, "input": <an object that type's schema accepts>}``.
``validate_automation`` returns every problem at once, keyed by the wire path of the
offending value (``trigger``, ``actions``, ``actions.1.type``, ``actions.1.input.subject``),
so an API error's ``details`` and the admin's messages can both name it exactly.
Adding a trigger or an action type is adding an entry here; nothing is stored elsewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email

from automations.delivery import is_refused_host
from lms.ids import parse_id

Problems = dict[str, list[str]]

# CONTRACT 8.9: an automation has at most 20 actions, and each action's input is at most
# 16 KiB of JSON (compact, UTF-8), so a run that copies them stays small.
MAX_ACTIONS = 20
MAX_INPUT_BYTES = 16 * 1024


@dataclass(frozen=True)
class Trigger:
    name: str
    description: str
    # Whom send_email may address by role when this trigger fires.
    recipients: frozenset[str] = frozenset({"learner"})
    # The conditions (``CONDITIONS``) that may limit it: its events' data carry their ids.
    conditions: tuple[str, ...] = ()
    # The keys of its events' data (docs/api.md, "When automations run"): ids, the member's
    # e-mail; ``invitedBy`` may be null.
    data: tuple[str, ...] = ()

    @property
    def schema_name(self) -> str:
        """Its part of the names of its schemas in the API's OpenAPI schema:
        ``enrollment.created`` is ``EnrollmentCreated``."""
        return "".join(part.capitalize() for part in self.name.split("."))


TRIGGERS: dict[str, Trigger] = {
    t.name: t
    for t in [
        Trigger(
            "enrollment.created",
            "A member is enrolled in a course.",
            conditions=("courseIds",),
            data=("enrollmentId", "courseId", "memberId", "email"),
        ),
        Trigger(
            "activity.completed",
            "A learner completes an activity.",
            conditions=("courseIds", "activityIds"),
            data=("activityId", "courseId", "memberId", "email"),
        ),
        Trigger(
            "course.completed",
            "A learner completes a course.",
            conditions=("courseIds",),
            data=("courseId", "memberId", "email"),
        ),
        Trigger(
            "invite.accepted",
            "An invitee accepts an invite and becomes a member ('learner' is the new member).",
            frozenset({"learner", "inviter"}),
            data=("inviteId", "memberId", "email", "invitedBy"),
        ),
    ]
}


# A check returns None when the value is good, else one sentence saying what is wrong.
Check = Callable[[Any, Trigger | None], str | None]


@dataclass(frozen=True)
class InputField:
    name: str
    check: Check
    doc: str
    required: bool = True
    schema: dict = field(default_factory=dict)  # as JSON Schema says it (the API's schema)
    # Its schema when a trigger's rule narrows what it takes (``send_email``'s ``to``: the
    # roles the trigger has), else ``schema`` for every trigger.
    for_trigger: Callable[[Trigger], dict] | None = None
    # The stored spelling of a valid value (an id lower-case, as every id is answered).
    normalize: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class ActionType:
    name: str
    description: str
    fields: tuple[InputField, ...] = field(default_factory=tuple)

    @property
    def schema_name(self) -> str:
        """The name of its schema in the API's OpenAPI schema: ``webhook`` is
        ``WebhookAction``."""
        return "".join(part.capitalize() for part in self.name.split("_")) + "Action"

    def varies_by_trigger(self, trigger: Trigger) -> bool:
        """Whether its schema for ``trigger`` is narrower than the one for every trigger."""
        return self.json_schema(trigger) != self.json_schema()

    def json_schema(self, trigger: Trigger | None = None) -> dict:
        """``{"type": <name>, "input": {...}}`` as JSON Schema (the API's OpenAPI schema):
        ``type`` holds the one value that tells this action type from the others (the
        discriminator of the action list, automations/schema.py). With ``trigger``, what
        that trigger's automations may hold (``InputField.for_trigger``)."""

        def field_schema(f: InputField) -> dict:
            if trigger is not None and f.for_trigger is not None:
                return f.for_trigger(trigger)
            return f.schema

        return {
            "type": "object",
            "title": self.schema_name,
            "description": self.description,
            "required": ["type", "input"],
            "additionalProperties": False,
            "properties": {
                "type": {"type": "string", "enum": [self.name]},
                "input": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [f.name for f in self.fields if f.required],
                    "properties": {
                        f.name: {**field_schema(f), "description": f.doc} for f in self.fields
                    },
                },
            },
        }

    def validate(self, data: dict, trigger: Trigger | None) -> Problems:
        """Problems of ``data`` keyed by its field names. ``trigger`` is None when unknown
        (that is reported on its own), and then checks that depend on it are skipped."""
        problems: Problems = {}
        known = {f.name for f in self.fields}
        for key in data:
            if key not in known:
                problems[str(key)] = [f"Unknown field; {self.name} takes {_names(known)}."]
        for spec in self.fields:
            if spec.name not in data:
                if spec.required:
                    problems[spec.name] = ["This field is required."]
                continue
            message = _unstorable_text(data[spec.name]) or spec.check(data[spec.name], trigger)
            if message:
                problems[spec.name] = [message]
        return problems

    def normalized(self, data: dict) -> dict:
        """A valid input as it is stored: each value in its field's stored spelling."""
        normalizers = {f.name: f.normalize for f in self.fields if f.normalize is not None}
        return {
            key: normalizers[key](value) if key in normalizers else value
            for key, value in data.items()
        }


def _names(names) -> str:
    return ", ".join(sorted(names))


# --- checks ---------------------------------------------------------------------------------


# PostgreSQL stores no NUL character in text or JSON: refused here, not failed on save.
_NO_NUL = "Must not contain NUL characters (U+0000)."
# A lone surrogate (a JSON body may carry one as a "\\ud800" escape) is no character: UTF-8
# cannot write it, so PostgreSQL refuses it and SQLite would store what no answer renders.
_NO_SURROGATE = "Must not contain lone surrogates (U+D800 to U+DFFF): they are not characters."
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable_text(value: Any) -> str | None:
    """What is wrong with any text in ``value`` (a string, or the keys and values of an
    object or list, however nested) that no database stores and no answer renders: NUL,
    or a lone surrogate. None when every text is fine. Every field of every action type is
    checked so, as DRF checks a top-level string such as ``name``."""
    if isinstance(value, str):
        found = _UNSTORABLE.search(value)
        if found is None:
            return None
        return _NO_NUL if found.group() == "\x00" else _NO_SURROGATE
    if isinstance(value, dict):
        for key, item in value.items():
            message = _unstorable_text(key) or _unstorable_text(item)
            if message:
                return message
    elif isinstance(value, list):
        for item in value:
            message = _unstorable_text(item)
            if message:
                return message
    return None


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (what the limit of an input counts)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


def _text(max_length: int) -> Check:
    def check(value, trigger):
        if not isinstance(value, str):
            return "Must be a string."
        if "\x00" in value:
            return _NO_NUL
        if len(value) > max_length:
            return f"Must be at most {max_length} characters."
        return None

    return check


# Blank characters, one class for the check and for the schema's pattern: Python's
# whitespace (``str.isspace``) and the byte-order mark. The two languages' ``\s`` differ
# (U+001C..U+001F and U+0085 are whitespace to Python only, U+FEFF to ECMAScript only), so
# a subject of U+0085 alone met the schema and was refused as blank.
_SPACE = (
    r"\t\n\u000b\u000c\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029"
    r"\u202f\u205f\u3000\ufeff"
)
_BLANK = re.compile(f"[{_SPACE}]*")
# One line that is not blank: the schema's side of ``_one_line``.
ONE_LINE_PATTERN = r"^[^\r\n\u0000]*[^" + _SPACE + r"\u0000][^\r\n\u0000]*$"


def _one_line(max_length: int) -> Check:
    """A ``_text`` that is not blank and holds no line break."""
    text = _text(max_length)

    def check(value, trigger):
        if not isinstance(value, str) or _BLANK.fullmatch(value):
            return "Must be a non-empty string."
        if "\r" in value or "\n" in value:
            return "Must be one line."
        return text(value, trigger)

    return check


# Whom send_email may address by role, under some trigger (``Trigger.recipients``).
RECIPIENT_ROLES = frozenset({"learner", "inviter"})


def _recipient_schema(roles: frozenset[str]) -> dict:
    return {
        "anyOf": [
            {"type": "string", "enum": [role for role in ("learner", "inviter") if role in roles]},
            {"type": "string", "format": "email"},
        ]
    }


def _recipient(value, trigger):
    roles = RECIPIENT_ROLES
    if not isinstance(value, str) or not value:
        return f"Must be {_names(roles)} or an e-mail address."
    if value in roles:
        if trigger is not None and value not in trigger.recipients:
            return (
                f"There is no {value} when {trigger.name} fires; "
                f"use {_names(trigger.recipients)} or an e-mail address."
            )
        return None
    try:
        validate_email(value)
    except ValidationError:
        return f"Must be {_names(roles)} or an e-mail address."
    return None


def _uuid_string(value, trigger):
    if isinstance(value, str) and parse_id(value) is not None:
        return None
    return "Must be an id: a UUID string such as 0190c3a2-7b1e-7c3d-9f00-2a5b6c7d8e9f."


def _lower_id(value: str) -> str:
    """An id as every id is stored and answered: lower-case, hyphenated."""
    return str(parse_id(value))


_http_url = URLValidator(schemes=["http", "https"])


def _url(value, trigger):
    if not isinstance(value, str) or len(value) > 2000:
        return "Must be an http or https URL of at most 2000 characters."
    try:
        url = urlsplit(value)
        # Django's validator takes any five digits as a port; no socket connects to 70000.
        port = url.port
    except ValueError:
        url, port = None, 0
    # The check the worker makes of every address it connects to (delivery.is_public), made
    # of the host as written (first: Django's validator refuses "localhost." as no URL); a
    # name is judged when a webhook is sent.
    if url and not settings.LMS_WEBHOOK_ALLOW_PRIVATE and is_refused_host(url.hostname or ""):
        return "Must not be a loopback, private or other non-public address, nor localhost."
    try:
        _http_url(value)
    except ValidationError:
        return "Must be an http or https URL."
    if port == 0:
        return "Must be an http or https URL whose port, if given, is 1 to 65535."
    return None


def _one_of(*choices: str) -> Check:
    def check(value, trigger):
        return None if value in choices else f"Must be one of {', '.join(choices)}."

    return check


_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$")
# What a field value may hold (RFC 9110 5.5: visible ASCII, space, tab and obs-text, i.e.
# Latin-1 without control characters): http.client sends a value as Latin-1 and could not
# send anything else, so such a webhook could never be delivered.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")
HEADER_VALUE_PATTERN = r"^[\t\u0020-\u007e\u0080-\u00ff]*$"


def _headers(value, trigger):
    if not isinstance(value, dict):
        return "Must be an object of header names to string values."
    for name, header_value in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            return f"{name!r} is not a valid header name."
        if not isinstance(header_value, str) or len(header_value) > 1000:
            return f"The value of {name} must be a string of at most 1000 characters."
        if "\r" in header_value or "\n" in header_value or "\x00" in header_value:
            return f"The value of {name} must be one line, without NUL characters."
        if not _HEADER_VALUE.fullmatch(header_value):
            return (
                f"The value of {name} must be Latin-1 text (U+0000 to U+00FF) without "
                "control characters other than tab."
            )
    return None


# An e-mail's body fits, with its subject and recipient, in one input's 16 KiB.
MAX_BODY_LENGTH = 15000

ACTION_TYPES: dict[str, ActionType] = {
    a.name: a
    for a in [
        ActionType(
            "send_email",
            "Send an e-mail.",
            (
                InputField(
                    "to",
                    _recipient,
                    '"learner", "inviter" (only for invite.accepted) or an e-mail address',
                    schema=_recipient_schema(RECIPIENT_ROLES),
                    for_trigger=lambda trigger: _recipient_schema(trigger.recipients),
                ),
                InputField(
                    "subject",
                    _one_line(200),
                    "non-empty, one line, at most 200 characters",
                    schema={
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 200,
                        "pattern": ONE_LINE_PATTERN,
                    },
                ),
                InputField(
                    "body",
                    _text(MAX_BODY_LENGTH),
                    f"a string (may be empty), at most {MAX_BODY_LENGTH} characters",
                    schema={
                        "type": "string",
                        "maxLength": MAX_BODY_LENGTH,
                        "pattern": r"^[^\u0000]*$",
                    },
                ),
            ),
        ),
        ActionType(
            "enroll_in_course",
            "Enroll the learner in a course.",
            (
                InputField(
                    "courseId",
                    _uuid_string,
                    "the id of a course of the organization",
                    schema={"type": "string", "format": "uuid"},
                    normalize=_lower_id,
                ),
            ),
        ),
        ActionType(
            "webhook",
            "Call an HTTP endpoint with the event as JSON.",
            (
                InputField(
                    "url",
                    _url,
                    "an http or https URL",
                    schema={"type": "string", "format": "uri", "maxLength": 2000},
                ),
                InputField(
                    "method",
                    _one_of("POST", "PUT"),
                    '"POST" (default) or "PUT"',
                    False,
                    schema={"type": "string", "enum": ["POST", "PUT"]},
                ),
                InputField(
                    "headers",
                    _headers,
                    "an object of header names to one-line string values",
                    False,
                    schema={
                        "type": "object",
                        # Names are HTTP tokens (1-100 of !#$%&'*+-.^_`|~ and ASCII
                        # letters and digits): OpenAPI 3.0 has no way to say so.
                        "additionalProperties": {
                            "type": "string",
                            "maxLength": 1000,
                            "pattern": HEADER_VALUE_PATTERN,
                        },
                    },
                ),
            ),
        ),
    ]
}


@dataclass(frozen=True)
class Condition:
    """A key of an automation's ``conditions`` (CONTRACT 8.7): a list of ids of ``model``
    (a model label of the organization's records); an event meets it when its data's
    ``data_key`` is one of them. ``description`` says so to API consumers."""

    key: str
    data_key: str
    model: str
    noun: str
    description: str


CONDITIONS: dict[str, Condition] = {
    c.key: c
    for c in [
        Condition(
            "courseIds",
            "courseId",
            "learn.Course",
            "course",
            "Only events of these courses of the organization",
        ),
        Condition(
            "activityIds",
            "activityId",
            "learn.Activity",
            "activity",
            "Only completions of these activities of the organization",
        ),
    ]
}
MAX_CONDITION_IDS = 100


def conditions_schema(keys: tuple[str, ...]) -> dict:
    """``conditions`` that hold only ``keys`` (of ``CONDITIONS``, each a list of ids), as
    JSON Schema: a closed object, so that a key its trigger cannot use is no valid body.
    Each key's description names the triggers that take it."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            key: {
                "type": "array",
                "items": {"type": "string", "format": "uuid"},
                "minItems": 1,
                "maxItems": MAX_CONDITION_IDS,
                "description": f"{CONDITIONS[key].description} ("
                + ", ".join(t.name for t in TRIGGERS.values() if key in t.conditions)
                + ").",
            }
            for key in keys
        },
    }


def validate_conditions(conditions: Any, trigger: Any) -> Problems:
    """Every problem of an automation's ``conditions`` for ``trigger``, keyed by wire path
    (``conditions``, ``conditions.courseIds``, ``conditions.courseIds.0``); empty when valid.
    Whether the ids are the organization's is ``automations.definition``'s to check."""
    if not isinstance(conditions, dict):
        return {"conditions": ["Must be an object: {} or courseIds and/or activityIds."]}
    problems: Problems = {}
    known_trigger = TRIGGERS.get(trigger) if isinstance(trigger, str) else None
    for key, ids in conditions.items():
        path = f"conditions.{key}"
        if key not in CONDITIONS:
            problems[path] = [f"Unknown condition; conditions take {_names(CONDITIONS)}."]
            continue
        if known_trigger is not None and key not in known_trigger.conditions:
            takes = _names(known_trigger.conditions) if known_trigger.conditions else "none"
            problems[path] = [f"{trigger} cannot be limited by {key}; it takes {takes}."]
            continue
        if not isinstance(ids, list) or not ids:
            problems[path] = [f"Must be a list of 1 to {MAX_CONDITION_IDS} ids."]
            continue
        if len(ids) > MAX_CONDITION_IDS:
            problems[path] = [f"At most {MAX_CONDITION_IDS} ids are allowed."]
            continue
        for index, value in enumerate(ids):
            message = _uuid_string(value, known_trigger)
            if message:
                problems[f"{path}.{index}"] = [message]
    return problems


def normalized_conditions(conditions: dict[str, list]) -> dict[str, list[str]]:
    """Valid conditions as stored and answered: keys in ``CONDITIONS``' order, ids lower-case,
    each once, in the order given."""
    return {
        key: list(dict.fromkeys(_lower_id(value) for value in conditions[key]))
        for key in CONDITIONS
        if key in conditions
    }


# The API schema's names for these sets (lms/settings.py ENUM_NAME_OVERRIDES).
TRIGGER_NAMES = list(TRIGGERS)
ACTION_TYPE_NAMES = list(ACTION_TYPES)


def validate_automation(trigger: Any, actions: Any) -> Problems:
    """Every problem of a trigger and its actions, keyed by wire path; empty when valid."""
    problems: Problems = {}
    known_trigger = TRIGGERS.get(trigger) if isinstance(trigger, str) else None
    if known_trigger is None:
        problems["trigger"] = [f"Unknown trigger {trigger!r}; expected one of {_names(TRIGGERS)}."]
    if not isinstance(actions, list):
        problems["actions"] = ["Must be a list of {type, input} objects."]
        return problems
    if not actions:
        problems["actions"] = ["At least one action is required."]
    elif len(actions) > MAX_ACTIONS:
        problems["actions"] = [f"At most {MAX_ACTIONS} actions are allowed."]
    for index, action in enumerate(actions[:MAX_ACTIONS]):
        path = f"actions.{index}"
        if not isinstance(action, dict):
            problems[path] = ["Must be an object with type and input."]
            continue
        extra = set(action) - {"type", "input"}
        if extra:
            problems[path] = [
                f"Unknown keys {_names(map(str, extra))}; an action has type and input."
            ]
        type_name = action.get("type")
        action_type = ACTION_TYPES.get(type_name) if isinstance(type_name, str) else None
        if action_type is None:
            problems[f"{path}.type"] = [
                f"Unknown action type {type_name!r}; expected one of {_names(ACTION_TYPES)}."
            ]
            continue
        data = action.get("input")
        if not isinstance(data, dict):
            problems[f"{path}.input"] = ["Must be an object."]
            continue
        size = json_size(data)
        if size > MAX_INPUT_BYTES:
            problems[f"{path}.input"] = [
                f"Must be at most {MAX_INPUT_BYTES} bytes of JSON (16 KiB); this is {size}."
            ]
            continue
        for key, messages in action_type.validate(data, known_trigger).items():
            problems[f"{path}.input.{key}"] = messages
    return problems


def normalized_actions(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Valid actions (``validate_automation`` found nothing) as they are stored: each input
    in its fields' stored spelling (ids lower-case)."""
    return [
        {"type": action["type"], "input": ACTION_TYPES[action["type"]].normalized(action["input"])}
        for action in actions
    ]


def describe_problem(path: str, message: str, actions: Any) -> str:
    """One sentence for a person: 'Action 2 (send_email), input.subject: Must be ...'."""
    parts = path.split(".", 2)
    if parts[0] == "conditions" and len(parts) == 3:
        return f"{parts[1]}, id {int(parts[2]) + 1}: {message}"
    if parts[0] != "actions" or len(parts) < 2:
        return message
    index = int(parts[1])
    action = actions[index] if isinstance(actions, list) and index < len(actions) else None
    action_type = action.get("type") if isinstance(action, dict) else None
    where = f"Action {index + 1}" + (f" ({action_type})" if isinstance(action_type, str) else "")
    return f"{where}, {parts[2]}: {message}" if len(parts) == 3 else f"{where}: {message}"


def _data_value(key: str) -> dict:
    if key == "email":
        return {"type": "string", "format": "email"}
    return {
        "type": "string",
        "format": "uuid",
        **({"nullable": True} if key == "invitedBy" else {}),
    }


# An event's data, one closed object per trigger (their keys tell them apart).
EVENT_DATA_SCHEMA = {
    "oneOf": [
        {
            "type": "object",
            "title": f"{trigger.name} data",
            "properties": {key: _data_value(key) for key in trigger.data},
            "required": list(trigger.data),
            "additionalProperties": False,
        }
        for trigger in TRIGGERS.values()
    ]
}

"""Every trigger and action type of the registry accepts good input and rejects bad input,
naming the offending value by its wire path."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automations.registry import (
    ACTION_TYPES,
    MAX_ACTIONS,
    MAX_BODY_LENGTH,
    ONE_LINE_PATTERN,
    TRIGGERS,
    describe_problem,
    validate_automation,
)

COURSE = "0190c3a2-7b1e-7c3d-9f00-2a5b6c7d8e9f"
EMAIL = {"to": "learner", "subject": "Hi", "body": "Hello."}

GOOD_INPUTS = {
    "send_email": [
        EMAIL,
        {"to": "someone@example.com", "subject": "Hi", "body": ""},
        {"to": "learner", "subject": "S" * 200, "body": "x" * MAX_BODY_LENGTH},
    ],
    "enroll_in_course": [{"courseId": COURSE}, {"courseId": COURSE.upper()}],
    "webhook": [
        {"url": "https://hooks.example.com/lms"},
        {"url": "http://hooks.example.com:8080/x?y=1", "method": "PUT"},
        {"url": "https://example.com", "method": "POST", "headers": {"X-Token": "abc"}},
        {"url": "https://example.com", "headers": {}},
    ],
}

# (action type, input, the input field the problem is reported on)
BAD_INPUTS = [
    ("send_email", {"subject": "Hi", "body": ""}, "to"),
    ("send_email", {**EMAIL, "to": "everyone"}, "to"),
    ("send_email", {**EMAIL, "to": ""}, "to"),
    ("send_email", {**EMAIL, "to": 7}, "to"),
    ("send_email", {**EMAIL, "to": "owner@"}, "to"),
    ("send_email", {"to": "learner", "body": ""}, "subject"),
    ("send_email", {**EMAIL, "subject": ""}, "subject"),
    ("send_email", {**EMAIL, "subject": "   "}, "subject"),
    ("send_email", {**EMAIL, "subject": "Hi\nBcc: all@example.com"}, "subject"),
    ("send_email", {**EMAIL, "subject": "S" * 201}, "subject"),
    ("send_email", {**EMAIL, "subject": ["Hi"]}, "subject"),
    ("send_email", {"to": "learner", "subject": "Hi"}, "body"),
    ("send_email", {**EMAIL, "body": None}, "body"),
    ("send_email", {**EMAIL, "body": "x" * (MAX_BODY_LENGTH + 1)}, "body"),
    ("send_email", {**EMAIL, "cc": "x@example.com"}, "cc"),
    ("enroll_in_course", {}, "courseId"),
    ("enroll_in_course", {"courseId": "not-a-uuid"}, "courseId"),
    ("enroll_in_course", {"courseId": COURSE.replace("-", "")}, "courseId"),
    ("enroll_in_course", {"courseId": 42}, "courseId"),
    ("enroll_in_course", {"courseId": COURSE, "course_id": COURSE}, "course_id"),
    ("webhook", {}, "url"),
    ("webhook", {"url": "ftp://example.com/x"}, "url"),
    ("webhook", {"url": "javascript:alert(1)"}, "url"),
    ("webhook", {"url": "example.com"}, "url"),
    ("webhook", {"url": "https://example.com/" + "a" * 2000}, "url"),
    ("webhook", {"url": "https://example.com", "method": "GET"}, "method"),
    ("webhook", {"url": "https://example.com", "method": "post"}, "method"),
    ("webhook", {"url": "https://example.com", "headers": ["X-A: b"]}, "headers"),
    ("webhook", {"url": "https://example.com", "headers": {"X-A": 1}}, "headers"),
    ("webhook", {"url": "https://example.com", "headers": {"Bad Name": "v"}}, "headers"),
    ("webhook", {"url": "https://example.com", "headers": {"X-A": "v\r\nX-B: w"}}, "headers"),
    ("webhook", {"url": "https://example.com", "body": "{}"}, "body"),
]


def test_the_registry_names_at_least_the_contracted_triggers_and_action_types():
    assert {
        "enrollment.created",
        "activity.completed",
        "course.completed",
        "invite.accepted",
    } <= set(TRIGGERS)
    assert {"send_email", "enroll_in_course", "webhook"} <= set(ACTION_TYPES)


def test_every_action_type_has_good_and_bad_examples_here():
    """Adding an action type without tests of its schema fails this test."""
    assert set(GOOD_INPUTS) == set(ACTION_TYPES)
    assert {action_type for action_type, _, _ in BAD_INPUTS} == set(ACTION_TYPES)


def test_the_registry_and_the_performers_cover_the_same_action_types():
    """A type the registry accepts has a performer, and a performer has a registered type."""
    from automations.actions import PERFORMERS

    assert set(PERFORMERS) == set(ACTION_TYPES)
    assert all(callable(perform) for perform in PERFORMERS.values())


@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_every_trigger_accepts_a_good_automation(trigger):
    assert validate_automation(trigger, [{"type": "send_email", "input": EMAIL}]) == {}


@pytest.mark.parametrize(
    "action_type, data",
    [(name, data) for name, inputs in GOOD_INPUTS.items() for data in inputs],
)
@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_every_action_type_accepts_good_input_under_every_trigger(trigger, action_type, data):
    assert validate_automation(trigger, [{"type": action_type, "input": data}]) == {}


@pytest.mark.parametrize("action_type, data, field", BAD_INPUTS)
def test_every_action_type_rejects_bad_input_naming_the_field(action_type, data, field):
    ok = {"type": "send_email", "input": EMAIL}
    problems = validate_automation("course.completed", [ok, {"type": action_type, "input": data}])
    assert list(problems) == [f"actions.1.input.{field}"]
    assert all(isinstance(m, str) and m for m in problems[f"actions.1.input.{field}"])


@pytest.mark.parametrize("trigger", ["", "enrollment.deleted", "ENROLLMENT.CREATED", None, 1, []])
def test_unknown_triggers_are_rejected(trigger):
    problems = validate_automation(trigger, [{"type": "send_email", "input": EMAIL}])
    assert list(problems) == ["trigger"]
    assert "expected one of" in problems["trigger"][0]


def test_the_inviter_exists_only_when_an_invite_is_accepted():
    action = [{"type": "send_email", "input": {**EMAIL, "to": "inviter"}}]
    assert validate_automation("invite.accepted", action) == {}
    for trigger in set(TRIGGERS) - {"invite.accepted"}:
        problems = validate_automation(trigger, action)
        assert list(problems) == ["actions.0.input.to"]
        assert f"There is no inviter when {trigger} fires" in problems["actions.0.input.to"][0]


@pytest.mark.parametrize(
    "actions, path",
    [
        (None, "actions"),
        ({"type": "send_email"}, "actions"),
        ([], "actions"),
        ([{"type": "send_email", "input": EMAIL}] * (MAX_ACTIONS + 1), "actions"),
        (["send_email"], "actions.0"),
        ([{"type": "send_email", "input": EMAIL, "when": "now"}], "actions.0"),
        ([{"type": "send_sms", "input": {}}], "actions.0.type"),
        ([{"input": EMAIL}], "actions.0.type"),
        ([{"type": "send_email"}], "actions.0.input"),
        ([{"type": "send_email", "input": "hello"}], "actions.0.input"),
    ],
)
def test_malformed_action_lists_are_rejected(actions, path):
    assert path in validate_automation("course.completed", actions)


def test_every_problem_is_reported_at_once():
    problems = validate_automation(
        "nope",
        [
            {"type": "send_email", "input": {"to": "learner"}},
            {"type": "teleport", "input": {}},
            {"type": "webhook", "input": {"url": "ftp://x"}},
        ],
    )
    assert set(problems) == {
        "trigger",
        "actions.0.input.subject",
        "actions.0.input.body",
        "actions.1.type",
        "actions.2.input.url",
    }


def test_problems_read_well_for_people():
    actions = [{"type": "send_email", "input": EMAIL}, {"type": "webhook", "input": {}}]
    assert (
        describe_problem("actions.1.input.url", "This field is required.", actions)
        == "Action 2 (webhook), input.url: This field is required."
    )
    assert (
        describe_problem("actions.0", "Must be an object.", ["x"]) == "Action 1: Must be an object."
    )
    assert describe_problem("trigger", "Unknown trigger.", actions) == "Unknown trigger."


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    trigger=JSON | st.sampled_from(sorted(TRIGGERS)),
    actions=JSON
    | st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(sorted(ACTION_TYPES)) | JSON},
            optional={"input": JSON, "extra": JSON},
        ),
        max_size=4,
    ),
)
def test_validation_never_fails_on_any_json(trigger, actions):
    """Whatever JSON arrives, validation answers with problems, never an exception."""
    problems = validate_automation(trigger, actions)
    assert isinstance(problems, dict)
    assert all(isinstance(m, str) for messages in problems.values() for m in messages)
    for path, messages in problems.items():
        for message in messages:
            assert describe_problem(path, message, actions)


def _schema_allows(text: str) -> bool:
    """The pattern as ECMAScript reads it: Python's ``$`` also matches before a final
    newline, so the anchored pattern is tried as a full match."""
    return re.fullmatch(ONE_LINE_PATTERN.removeprefix("^").removesuffix("$"), text) is not None


def _subject():
    return next(f for f in ACTION_TYPES["send_email"].fields if f.name == "subject")


_WHITESPACE = [chr(c) for c in range(0x3001) if chr(c).isspace()] + ["\ufeff", "\u200b"]


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(st.sampled_from(_WHITESPACE), st.characters(codec="utf-8")), max_size=12
    ).map("".join)
)
def test_a_subject_the_schema_allows_is_one_the_check_accepts(subject):
    """The schema's pattern (read alike by ECMAScript and Python: no ``\\s`` in it) and the
    server's check agree on every one-line subject, blank or not."""
    check = _subject().check
    allowed = _schema_allows(subject) and 1 <= len(subject) <= 200
    assert (check(subject, None) is None) == allowed, repr(subject)


@pytest.mark.parametrize(
    "subject, message",
    [
        *[(blank, "Must be a non-empty string.") for blank in ["\u0085", "\x1c", " \u3000\t"]],
        *[(blank, "Must be a non-empty string.") for blank in ["\ufeff", "\u2028"]],
        ("\u200b\n", "Must be one line."),  # a final newline: ECMAScript's $ is the end
        ("x\n", "Must be one line."),
    ],
)
def test_a_subject_refused_by_the_check_is_refused_by_the_schema(subject, message):
    assert _subject().check(subject, None) == message
    assert not _schema_allows(subject)

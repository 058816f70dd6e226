"""What a hostile or careless client sends in an automation: text no database stores, names
taken by another request, webhooks that could never be delivered, ids in any case, inputs
and lists beyond the limits (CONTRACT 7.1, 8.9). Every one is refused naming its path, or
stored as every reader expects; nothing half-stored."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations.models import Automation
from automations.registry import MAX_ACTIONS, MAX_INPUT_BYTES
from tests.automations.factories import AutomationFactory, editor_fields, welcome_email
from tests.helpers import admin_client, assert_error
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db
URL = "/api/automations"
HOOK_URL = "https://hooks.example.com/lms"


def body(*actions: dict, **changes) -> dict:
    return {
        "name": "Welcome",
        "trigger": "enrollment.created",
        "actions": list(actions) or [welcome_email()],
        **changes,
    }


def hook(**data) -> dict:
    return {"type": "webhook", "input": {"url": HOOK_URL, **data}}


# --- text no database stores: lone surrogates and NUL, anywhere in an input ----------------

UNSTORABLE = [
    (welcome_email(subject="Hi \ud800"), "actions.0.input.subject"),
    (welcome_email(body="Hello \udfff there"), "actions.0.input.body"),
    (welcome_email(to="\udbff@example.com"), "actions.0.input.to"),
    (hook(url=HOOK_URL + "/\ud800"), "actions.0.input.url"),
    (hook(url=HOOK_URL + "/\x00"), "actions.0.input.url"),
    (hook(headers={"X-Source": "lms\ud800"}), "actions.0.input.headers"),
]


@pytest.mark.parametrize(("action", "path"), UNSTORABLE)
def test_unstorable_text_in_an_input_is_a_400_naming_its_path(api, owner, action, path):
    # The client's JSON carries a lone surrogate as a "\ud800" escape (json.dumps writes so).
    error = assert_error(api.post(URL, body(action), token=owner.token), 400, "validation_error")
    assert set(error["details"]) == {path}
    assert not Automation.objects.for_org(owner.org).exists()


@pytest.mark.parametrize(("action", "path"), UNSTORABLE)
def test_unstorable_text_in_a_patch_is_a_400_and_the_automation_keeps_its_actions(
    api, owner, action, path
):
    automation = AutomationFactory(org=owner.org)
    response = api.request(
        "PATCH", f"{URL}/{automation.id}", {"actions": [action]}, token=owner.token
    )
    assert set(assert_error(response, 400, "validation_error")["details"]) == {path}
    automation.refresh_from_db()
    assert automation.actions == [welcome_email()]
    assert api.get(URL, token=owner.token).status_code == 200


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (HOOK_URL + "/\x00", "Must not contain NUL characters (U+0000)."),
        # issue 38, item 5: the worker's address check, made at save in the admin too
        (
            "http://127.0.0.1:8000/x",
            "Must not be a loopback, private or other non-public address, nor localhost.",
        ),
    ],
)
def test_the_admin_refuses_an_undeliverable_url_and_stores_nothing(org, url, problem):
    staff = admin_client(org)
    data = {
        "org": str(org.pk),
        "name": "Hook",
        "trigger": "enrollment.created",
        **editor_fields([{"type": "webhook", "input": {"url": url}}]),
    }
    response = staff.post("/admin/automations/automation/add/", data)
    assert response.status_code == 200  # the form again, with the problem beside the action
    assert response.context["adminform"].form.errors == {
        "actions": [f"Action 1 (webhook), input.url: {problem}"]
    }
    assert not Automation.all_orgs.exists()


# --- a taken name is 409 conflict naming name, sequential or racing -------------------------


def test_creating_or_renaming_to_a_taken_name_is_409_naming_name(api, owner, other_owner):
    assert api.post(URL, body(), token=owner.token).status_code == 201
    assert api.post(URL, body(), token=other_owner.token).status_code == 201  # another org
    error = assert_error(api.post(URL, body(), token=owner.token), 409, "conflict")
    assert error["details"] == {"name": ["Another automation of the organization has this name."]}
    other = AutomationFactory(org=owner.org, name="Other")
    renamed = api.request("PATCH", f"{URL}/{other.id}", {"name": "Welcome"}, token=owner.token)
    assert set(assert_error(renamed, 409, "conflict")["details"]) == {"name"}
    other.refresh_from_db()
    assert other.name == "Other"
    # Keeping its own name is no conflict.
    same = api.request("PATCH", f"{URL}/{other.id}", {"name": "Other"}, token=owner.token)
    assert same.status_code == 200


# --- a PATCH writes what changed, never the signing secret ----------------------------------


def test_a_patch_writes_only_what_changed_and_never_the_signing_secret(api, owner):
    automation = AutomationFactory(org=owner.org, trigger="course.completed")
    secret = automation.signing_secret
    with CaptureQueriesContext(connection) as queries:
        response = api.request(
            "PATCH",
            f"{URL}/{automation.id}",
            {"enabled": False, "description": "Changed"},
            token=owner.token,
        )
    assert response.status_code == 200, response.content
    assert not [q["sql"] for q in queries if secret in q["sql"]]
    [update] = [q["sql"] for q in queries if q["sql"].startswith("UPDATE")]
    assert "signing_secret" not in update and "actions" not in update and '"name"' not in update
    automation.refresh_from_db()
    assert (automation.enabled, automation.description) == (False, "Changed")
    assert automation.signing_secret == secret


# --- webhooks that could never be delivered are refused at save -----------------------------


@pytest.mark.parametrize(
    ("action", "path"),
    [
        (hook(url="https://hooks.example.com:65536/x"), "actions.0.input.url"),
        (hook(url="https://hooks.example.com:99999/x"), "actions.0.input.url"),
        (hook(url="https://hooks.example.com:0/x"), "actions.0.input.url"),
        (hook(headers={"X-Source": "l\u0131ms"}), "actions.0.input.headers"),  # dotless i
        (hook(headers={"X-Source": "\u20ac"}), "actions.0.input.headers"),
        (hook(headers={"X-Source": "a\x7fb"}), "actions.0.input.headers"),
        (hook(headers={"X-Source": "a\x1bb"}), "actions.0.input.headers"),
        (hook(headers={"X Source": "lms"}), "actions.0.input.headers"),
        (hook(headers={"X-Sourc\u00e9": "lms"}), "actions.0.input.headers"),
    ],
)
def test_an_undeliverable_webhook_is_a_400_naming_its_path(api, owner, action, path):
    error = assert_error(api.post(URL, body(action), token=owner.token), 400, "validation_error")
    assert set(error["details"]) == {path}
    assert not Automation.objects.for_org(owner.org).exists()


# Every form of a non-public address the worker unwraps, and localhost (issue 38, item 5).
LITERAL_PRIVATE = [
    "http://127.0.0.1/x",
    "http://localhost:8000/x",
    "http://LOCALHOST./x",
    "http://api.localhost./x",
    "http://Api.LocalHost/x",
    "http://10.1.2.3/x",
    "http://169.254.169.254/latest",
    "http://[::1]/x",
    "http://[::ffff:127.0.0.1]/x",
    "http://[::ffff:0:a00:5]/x",
    "http://[64:ff9b::a9fe:a9fe]/x",
    "http://[2002:7f00:1::1]/x",
    "http://[fc00::1]/x",
    "http://192.0.0.8/x",
]


@pytest.mark.parametrize("url", LITERAL_PRIVATE)
def test_a_webhook_to_a_literal_private_address_is_refused_at_save(api, owner, url):
    """The worker's own address check, made of the host as written (CONTRACT 7.2): a 400
    naming the URL, where it used to be saved and then refused through minutes of retries."""
    error = assert_error(
        api.post(URL, body(hook(url=url)), token=owner.token), 400, "validation_error"
    )
    assert error["details"] == {
        "actions.0.input.url": [
            "Must not be a loopback, private or other non-public address, nor localhost."
        ]
    }
    assert not Automation.objects.for_org(owner.org).exists()


def test_a_literal_private_address_is_saved_where_private_addresses_are_allowed(
    api, owner, settings
):
    settings.LMS_WEBHOOK_ALLOW_PRIVATE = True
    for n, url in enumerate(LITERAL_PRIVATE):
        if url.split("/")[2].endswith("."):
            continue  # a trailing dot after localhost is no URL to Django's validator
        created = api.post(URL, {**body(hook(url=url)), "name": f"Hook {n}"}, token=owner.token)
        assert created.status_code == 201, created.content


def test_a_deliverable_webhook_with_latin1_headers_and_a_port_is_saved(api, owner):
    action = hook(url="https://hooks.example.com:65535/x", headers={"X-Name": "Jos\u00e9\tM"})
    assert api.post(URL, body(action), token=owner.token).status_code == 201


# --- ids in inputs are stored and answered lower-case ---------------------------------------


def test_an_id_in_an_input_is_stored_and_answered_lower_case(api, owner):
    course = CourseFactory(org=owner.org)
    enroll = {"type": "enroll_in_course", "input": {"courseId": str(course.id).upper()}}
    created = api.post(URL, body(enroll), token=owner.token)
    assert created.status_code == 201, created.content
    expected = [{"type": "enroll_in_course", "input": {"courseId": str(course.id)}}]
    assert created.json()["actions"] == expected
    automation_id = created.json()["id"]
    assert api.get(f"{URL}/{automation_id}", token=owner.token).json()["actions"] == expected
    assert Automation.objects.for_org(owner.org).get().actions == expected
    patched = api.request(
        "PATCH", f"{URL}/{automation_id}", {"actions": [enroll]}, token=owner.token
    )
    assert patched.json()["actions"] == expected


def test_the_admin_stores_an_id_lower_case_and_its_picker_shows_it(org):
    course = CourseFactory(org=org, title="Python basics")
    staff = admin_client(org)
    data = {
        "org": str(org.pk),
        "name": "Enroll",
        "trigger": "enrollment.created",
        **editor_fields(
            [{"type": "enroll_in_course", "input": {"courseId": str(course.id).upper()}}]
        ),
    }
    assert staff.post("/admin/automations/automation/add/", data).status_code == 302
    automation = Automation.all_orgs.get()
    assert automation.actions[0]["input"]["courseId"] == str(course.id)
    page = staff.get(f"/admin/automations/automation/{automation.pk}/change/").content.decode()
    assert f'<option value="{course.id}" selected>Python basics</option>' in page


# --- the limits of CONTRACT 8.9 --------------------------------------------------------------


def test_an_input_over_16_kib_of_json_is_a_400_naming_it(api, owner):
    # Counted as compact UTF-8 JSON: each "é" is two bytes. The input's text around the
    # body is 47 bytes: {"to":"learner","subject":"Welcome!","body":""}.
    at_limit = welcome_email(body="x" + "\u00e9" * ((MAX_INPUT_BYTES - 48) // 2))
    over = welcome_email(body="xx" + "\u00e9" * ((MAX_INPUT_BYTES - 48) // 2))
    error = assert_error(
        api.post(URL, body(welcome_email(), over), token=owner.token), 400, "validation_error"
    )
    assert set(error["details"]) == {"actions.1.input"}
    assert str(MAX_INPUT_BYTES) in error["details"]["actions.1.input"][0]
    assert not Automation.objects.for_org(owner.org).exists()
    assert api.post(URL, body(at_limit), token=owner.token).status_code == 201


def test_more_than_20_actions_is_a_400(api, owner):
    error = api.post(URL, body(*[welcome_email()] * (MAX_ACTIONS + 1)), token=owner.token)
    assert set(assert_error(error, 400, "validation_error")["details"]) == {"actions"}
    assert (
        api.post(URL, body(*[welcome_email()] * MAX_ACTIONS), token=owner.token).status_code == 201
    )


def test_enabled_automations_per_trigger_are_limited(api, owner, other_owner, settings):
    settings.LMS_AUTOMATIONS_PER_TRIGGER = 2
    for n in range(2):
        assert api.post(URL, body(name=f"On {n}"), token=owner.token).status_code == 201
    error = assert_error(
        api.post(URL, body(name="Third"), token=owner.token), 400, "validation_error"
    )
    assert set(error["details"]) == {"trigger"} and "At most 2" in error["details"]["trigger"][0]
    # Disabled ones and other triggers do not count.
    off = api.post(URL, body(name="Off", enabled=False), token=owner.token)
    assert off.status_code == 201
    other = api.post(URL, body(name="Other", trigger="course.completed"), token=owner.token)
    assert other.status_code == 201
    # Enabling one, or moving one to the full trigger, is refused; other edits are not.
    off_url, other_url = f"{URL}/{off.json()['id']}", f"{URL}/{other.json()['id']}"
    enabling = api.request("PATCH", off_url, {"enabled": True}, token=owner.token)
    assert set(assert_error(enabling, 400, "validation_error")["details"]) == {"enabled"}
    moving = api.request("PATCH", other_url, {"trigger": "enrollment.created"}, token=owner.token)
    assert set(assert_error(moving, 400, "validation_error")["details"]) == {"trigger"}
    assert (
        api.request("PATCH", other_url, {"description": "x"}, token=owner.token).status_code == 200
    )
    assert (
        Automation.objects.for_org(owner.org)
        .filter(trigger="enrollment.created", enabled=True)
        .count()
        == 2
    )
    # Another organization has its own room.
    assert api.post(URL, body(name="Theirs"), token=other_owner.token).status_code == 201


def test_the_admin_keeps_the_limit_of_enabled_automations_per_trigger(org, settings):
    settings.LMS_AUTOMATIONS_PER_TRIGGER = 1
    AutomationFactory(org=org, trigger="enrollment.created")
    staff = admin_client(org)
    data = {
        "org": str(org.pk),
        "name": "Second",
        "trigger": "enrollment.created",
        "enabled": "on",
        **editor_fields([welcome_email(subject="Hi", body="")]),
    }
    response = staff.post("/admin/automations/automation/add/", data)
    assert response.status_code == 200
    assert "At most 1 enabled" in response.context["adminform"].form.errors["trigger"][0]
    del data["enabled"]
    assert staff.post("/admin/automations/automation/add/", data).status_code == 302
    assert Automation.all_orgs.filter(org=org).count() == 2


def test_the_admin_refuses_an_input_over_16_kib(org):
    staff = admin_client(org)
    data = {
        "org": str(org.pk),
        "name": "Long",
        "trigger": "enrollment.created",
        # 18,000 bytes of UTF-8 in the body
        **editor_fields([welcome_email(subject="Hi", body="\u00e9" * 9000)]),
    }
    response = staff.post("/admin/automations/automation/add/", data)
    assert response.status_code == 200
    [message] = response.context["adminform"].form.errors["actions"]
    assert message.startswith(f"Action 1 (send_email), input: Must be at most {MAX_INPUT_BYTES}")
    assert not Automation.all_orgs.exists()

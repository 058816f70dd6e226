"""How runs are stored (CONTRACT 8.9, 7.1): a learner's request writes the run rows alone,
referring to a revision of the actions written when staff saved them; an attempt writes its
own action's row, never the other actions or their inputs."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations import runs
from automations.models import Automation, AutomationRevision, AutomationRun, AutomationRunAction
from learn.models import Enrollment
from tests.automations.factories import AutomationFactory, make_run, welcome_email
from tests.helpers import admin_client, make_member
from tests.learn.factories import ActivityFactory, CourseFactory

pytestmark = pytest.mark.django_db

# An input near the limit of 16 KiB, and a marker to look for in the statements sent.
MARKER = "INPUTMARKER"


def big_email(number: int) -> dict:
    return welcome_email(body=f"{MARKER}{number} " + "x" * 16000)


def writes(captured) -> list[str]:
    return [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    ]


def test_a_completing_report_writes_the_run_rows_alone(api, org):
    course = CourseFactory(org=org)
    activity = ActivityFactory(org=org, module__course=course)
    for _ in range(3):
        AutomationFactory(
            org=org, trigger="course.completed", actions=[big_email(n) for n in range(20)]
        )
    learner = make_member(org)
    Enrollment.objects.create(org=org, course=course, membership=learner.membership)
    body = {"activity": str(activity.id), "reports": [{"type": "complete"}]}
    with CaptureQueriesContext(connection) as captured:
        response = api.post("/api/learn/progress", body, token=learner.token)
    assert response.status_code == 200, response.content
    automation_writes = [sql for sql in writes(captured) if '"automations_' in sql]
    assert len(automation_writes) == 1  # one INSERT of the run rows
    assert automation_writes[0].startswith("INSERT")
    assert 'INTO "automations_automationrun" (' in automation_writes[0]
    assert MARKER not in automation_writes[0]
    assert len(automation_writes[0]) < 6000  # three small rows, not 3 x 20 x 16 KiB
    assert AutomationRun.objects.for_org(org).count() == 3
    assert not AutomationRunAction.objects.for_org(org).exists()


def test_an_attempt_writes_its_own_actions_row_and_never_the_inputs(settings, org):
    settings.LMS_AUTOMATION_RETRY_BASE_SECONDS = 10
    hook = {"type": "webhook", "input": {"url": "http://127.0.0.1:9/hook"}}
    automation = AutomationFactory(
        org=org, actions=[big_email(0), big_email(1), hook, big_email(2)]
    )
    run = make_run(automation)
    with CaptureQueriesContext(connection) as captured:
        runs.execute(run.id)
    sent = writes(captured)
    assert not [sql for sql in sent if MARKER in sql]
    action_writes = [sql for sql in sent if '"automations_automationrunaction"' in sql]
    # Each of the three attempts: its row marked running (an INSERT, the first time), then
    # its outcome (an UPDATE of that row alone).
    assert [sql.split()[0] for sql in action_writes] == ["INSERT", "UPDATE"] * 3
    for sql in action_writes:
        if sql.startswith("UPDATE"):
            assert "WHERE" in sql and '"id" =' in sql.split("WHERE", 1)[1]
    run_writes = [sql for sql in sent if sql.startswith('UPDATE "automations_automationrun" ')]
    assert all('"actions"' not in sql for sql in run_writes)
    run.refresh_from_db()
    assert [(a["status"], a["attempts"]) for a in run.actions] == [
        ("succeeded", 1),
        ("succeeded", 1),
        ("running", 1),
        ("pending", 0),
    ]
    assert run.actions[2]["lastError"] == "refused: not a public address"


def test_saving_new_actions_writes_a_revision_and_runs_keep_theirs(api, org):
    owner = make_member(org, role="owner")
    created = api.post(
        "/api/automations",
        {"name": "Hello", "trigger": "enrollment.created", "actions": [welcome_email()]},
        token=owner.token,
    )
    assert created.status_code == 201, created.content
    automation = Automation.objects.for_org(org).get()
    first = automation.revision
    assert first.actions == [welcome_email()] and first.types == ["send_email"]
    url = f"/api/automations/{automation.id}"
    assert api.request("PATCH", url, {"name": "Hi"}, token=owner.token).status_code == 200
    assert api.request("PATCH", url, {"enabled": False}, token=owner.token).status_code == 200
    assert AutomationRevision.objects.for_org(org).count() == 1  # same actions, same revision
    changed = [welcome_email(subject="Changed")]
    assert api.request("PATCH", url, {"actions": changed}, token=owner.token).status_code == 200
    automation.refresh_from_db()
    assert automation.revision_id != first.id and automation.revision.actions == changed
    # Back to the first actions: their revision again, nothing new written.
    back = api.request("PATCH", url, {"actions": [welcome_email()]}, token=owner.token)
    assert back.status_code == 200
    automation.refresh_from_db()
    assert automation.revision_id == first.id
    assert AutomationRevision.objects.for_org(org).count() == 2


def test_a_run_uses_the_revision_of_its_event_whatever_staff_save_later(settings, org, learner):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    from django.core import mail

    from learn.services import enroll

    automation = AutomationFactory(org=org, trigger="enrollment.created")
    enroll(membership=learner.membership, course=CourseFactory(org=org))
    automation.actions = [welcome_email(subject="Changed")]
    automation.save()
    (run,) = AutomationRun.objects.for_org(org)
    runs.execute(run.id)
    (sent,) = mail.outbox
    assert sent.subject == "Welcome!"


def test_deleting_an_automation_deletes_its_revisions_runs_and_their_rows(api, org):
    owner = make_member(org, role="owner")
    automation = AutomationFactory(org=org)
    automation.actions = [welcome_email(subject="Second")]
    automation.save()
    run = make_run(automation)
    AutomationRunAction.objects.create(org=org, run=run, index=0, status="succeeded")
    assert api.delete(f"/api/automations/{automation.id}", token=owner.token).status_code == 204
    for model in (AutomationRevision, AutomationRun, AutomationRunAction):
        assert not model.objects.for_org(org).exists()


@pytest.mark.django_db(transaction=True)
def test_the_migrations_move_runs_onto_revisions_and_rows_and_back():
    from django.db.migrations.executor import MigrationExecutor
    from django.utils import timezone

    copied = ("automations", "0004_automation_revisions_and_run_action_states")
    moved = ("automations", "0006_drop_run_actions_copy")
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    try:
        executor.migrate([copied])
        old = MigrationExecutor(connection).loader.project_state([copied]).apps
        org = old.get_model("organizations", "Organization")._base_manager.create(name="Org")
        actions = [welcome_email(), {"type": "webhook", "input": {"url": "https://x.test/"}}]
        automation = old.get_model("automations", "Automation")._base_manager.create(
            org=org, name="A", trigger="enrollment.created", actions=actions
        )
        outcomes = [
            {"status": "succeeded", "attempts": 1, "lastError": None, "response": None},
            {
                "status": "failed",
                "attempts": 5,
                "lastError": "The endpoint answered 500.",
                "response": {"status": 500, "durationMs": 3},
            },
        ]
        now = timezone.now()
        run = old.get_model("automations", "AutomationRun")._base_manager.create(
            org=org,
            automation=automation,
            trigger="enrollment.created",
            event_id=automation.id,
            occurred_at=now,
            due_at=now,
            status="failed",
            # As the run was recorded before a staff edit: not the automation's actions now.
            actions=[
                {**welcome_email(subject="Earlier"), **outcomes[0]},
                {**actions[1], **outcomes[1]},
            ],
        )
        executor = MigrationExecutor(connection)
        executor.migrate([moved])
        new = MigrationExecutor(connection).loader.project_state([moved]).apps
        Run = new.get_model("automations", "AutomationRun")
        moved_run = Run._base_manager.select_related("revision").get(id=run.id)
        assert moved_run.revision.actions == [welcome_email(subject="Earlier"), actions[1]]
        assert moved_run.revision.types == ["send_email", "webhook"]
        rows = new.get_model("automations", "AutomationRunAction")._base_manager.filter(
            run_id=run.id
        )
        assert sorted((r.index, r.status, r.attempts, r.last_error, r.response) for r in rows) == [
            (0, "succeeded", 1, "", None),
            (1, "failed", 5, "The endpoint answered 500.", {"status": 500, "durationMs": 3}),
        ]
        current = new.get_model("automations", "Automation")._base_manager.get(id=automation.id)
        assert current.revision.actions == actions and current.revision_id != moved_run.revision_id
        executor = MigrationExecutor(connection)
        executor.migrate([copied])
        back = MigrationExecutor(connection).loader.project_state([copied]).apps
        restored = back.get_model("automations", "AutomationRun")._base_manager.get(id=run.id)
        assert restored.actions == run.actions
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(latest)


def test_an_admin_edit_of_the_actions_writes_their_revision(org):
    from automations.services import save_automation
    from tests.automations.test_automation_writes import form_data

    staff = admin_client()
    automation = save_automation(
        org=org, name="Welcome", trigger="enrollment.created", actions=[welcome_email()]
    )
    first = automation.revision_id
    changed = [welcome_email(subject="Edited in the admin")]
    response = staff.post(
        f"/admin/automations/automation/{automation.pk}/change/", form_data(org, actions=changed)
    )
    assert response.status_code == 302, response.content[:2000]
    automation.refresh_from_db()
    assert automation.revision_id != first and automation.revision.actions == changed
    # Saved again unchanged: the same revision.
    response = staff.post(
        f"/admin/automations/automation/{automation.pk}/change/", form_data(org, actions=changed)
    )
    assert response.status_code == 302
    assert AutomationRevision.objects.for_org(org).count() == 2


def test_an_automation_saved_around_the_model_gets_its_revision_when_it_runs(org, learner):
    from learn.services import enroll

    automation = AutomationFactory(org=org, trigger="enrollment.created")
    Automation.objects.for_org(org).update(revision=None)  # as a bulk load would leave it
    AutomationRevision.objects.for_org(org).delete()
    enroll(membership=learner.membership, course=CourseFactory(org=org))
    (run,) = AutomationRun.objects.for_org(org)
    assert run.revision.actions == automation.actions
    assert Automation.objects.for_org(org).get().revision_id == run.revision_id


def test_the_admins_run_pages_cost_the_same_queries_whatever_the_actions(org):
    made = []
    for number in (1, 20):
        automation = AutomationFactory(org=org, actions=[big_email(n) for n in range(number)])
        run = make_run(automation, status="running")
        for index in range(number // 2 + 1):
            AutomationRunAction.objects.create(
                org=org, run=run, index=index, status="succeeded", attempts=1
            )
        made.append((number, run))
    staff = admin_client()
    staff.get(f"/admin/automations/automationrun/{run.id}/change/")  # caches per process
    counts = []
    for number, run in made:
        with CaptureQueriesContext(connection) as page:
            detail = staff.get(f"/admin/automations/automationrun/{run.id}/change/")
        assert detail.status_code == 200
        assert f"{MARKER}{number - 1}" in detail.content.decode()  # the inputs, as they were
        with CaptureQueriesContext(connection) as listed:
            assert staff.get("/admin/automations/automationrun/").status_code == 200
        counts.append((len(page), len(listed)))
    assert counts[0] == counts[1]

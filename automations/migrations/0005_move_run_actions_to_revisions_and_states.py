"""Existing automations and runs onto revisions and action rows, and back."""

import hashlib
import json

from django.db import migrations


def digest_of(actions):
    text = json.dumps(actions, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def forward(apps, schema_editor):
    Automation = apps.get_model("automations", "Automation")
    Revision = apps.get_model("automations", "AutomationRevision")
    Run = apps.get_model("automations", "AutomationRun")
    RunAction = apps.get_model("automations", "AutomationRunAction")
    known = {}

    def revision_of(org_id, automation_id, actions):
        key = (automation_id, digest_of(actions))
        if key not in known:
            revision = Revision._base_manager.filter(
                automation_id=automation_id, digest=key[1]
            ).first() or Revision._base_manager.create(
                org_id=org_id,
                automation_id=automation_id,
                digest=key[1],
                actions=actions,
                types=[a.get("type") if isinstance(a, dict) else None for a in actions or []],
            )
            known[key] = revision.id
        return known[key]

    for automation in Automation._base_manager.all().iterator(chunk_size=200):
        automation.revision_id = revision_of(automation.org_id, automation.id, automation.actions)
        automation.save(update_fields=["revision"])
    for run in Run._base_manager.all().iterator(chunk_size=200):
        actions = run.actions or []
        run.revision_id = revision_of(
            run.org_id,
            run.automation_id,
            [{"type": a["type"], "input": a.get("input", {})} for a in actions],
        )
        run.save(update_fields=["revision"])
        RunAction._base_manager.bulk_create(
            [
                RunAction(
                    org_id=run.org_id,
                    run_id=run.id,
                    index=index,
                    status=action.get("status", "pending"),
                    attempts=action.get("attempts", 0),
                    last_error=action.get("lastError") or "",
                    response=action.get("response"),
                    finished_at=run.finished_at
                    if action.get("status") in ("succeeded", "failed")
                    else None,
                )
                for index, action in enumerate(actions)
                if action.get("status", "pending") != "pending" or action.get("attempts")
            ]
        )


def backward(apps, schema_editor):
    Automation = apps.get_model("automations", "Automation")
    Revision = apps.get_model("automations", "AutomationRevision")
    Run = apps.get_model("automations", "AutomationRun")
    RunAction = apps.get_model("automations", "AutomationRunAction")
    for run in Run._base_manager.select_related("revision").iterator(chunk_size=200):
        states = {s.index: s for s in RunAction._base_manager.filter(run_id=run.id)}
        run.actions = [
            {
                "type": action["type"],
                "input": action["input"],
                "status": states[index].status if index in states else "pending",
                "attempts": states[index].attempts if index in states else 0,
                "lastError": (states[index].last_error or None) if index in states else None,
                "response": states[index].response if index in states else None,
            }
            for index, action in enumerate(run.revision.actions if run.revision_id else [])
        ]
        run.save(update_fields=["actions"])
    # As 0004 left them: no rows, no revisions.
    RunAction._base_manager.all().delete()
    Run._base_manager.update(revision=None)
    Automation._base_manager.update(revision=None)
    Revision._base_manager.all().delete()


class Migration(migrations.Migration):
    dependencies = [("automations", "0004_automation_revisions_and_run_action_states")]

    operations = [migrations.RunPython(forward, backward)]

"""seed_demo part of this app (see docs/demo.md and lms/demo.py)."""

from automations.models import Automation
from automations.services import save_automation
from lms.demo import DemoOrg


def demo_automations(demo: DemoOrg) -> list[dict]:
    hooks = "https://hooks.example.com/lms"
    courses = demo.manifest.get("courses") or []
    # The course.completed automations are aimed at the demo course the learner is enrolled
    # in (CONTRACT 8.7): a course staff add later completes without firing them.
    aimed = {"courseIds": [courses[0]["id"]]} if courses else {}
    automations = [
        {
            "name": "Welcome new members",
            "description": "Greet whoever accepts an invite and tell the person who invited them.",
            "trigger": "invite.accepted",
            "actions": [
                {
                    "type": "send_email",
                    "input": {
                        "to": "learner",
                        "subject": f"Welcome to {demo.org.name}",
                        "body": "Your courses are waiting for you.",
                    },
                },
                {
                    "type": "send_email",
                    "input": {
                        "to": "inviter",
                        "subject": "Your invite was accepted",
                        "body": "The person you invited has joined.",
                    },
                },
            ],
            "enabled": True,
        },
        {
            "name": "Report course completions",
            "description": "Congratulate the learner and tell the HR system.",
            "trigger": "course.completed",
            "conditions": aimed,
            "actions": [
                {
                    "type": "send_email",
                    "input": {"to": "learner", "subject": "Well done!", "body": ""},
                },
                {
                    "type": "webhook",
                    "input": {
                        "url": f"{hooks}/completions",
                        "method": "POST",
                        "headers": {"X-Source": "lms-demo"},
                    },
                },
            ],
            "enabled": True,
        },
        {
            "name": "Mirror activity completions",
            "description": "Switched off: an example of a disabled automation.",
            "trigger": "activity.completed",
            "actions": [{"type": "webhook", "input": {"url": f"{hooks}/activities"}}],
            "enabled": False,
        },
    ]
    if courses:
        automations.append(
            {
                "name": "Enroll in the follow-up course",
                "description": "Whoever completes the first course is enrolled in the next one.",
                "trigger": "course.completed",
                "conditions": aimed,
                "actions": [{"type": "enroll_in_course", "input": {"courseId": courses[-1]["id"]}}],
                "enabled": True,
            }
        )
    return automations


def seed(demo: DemoOrg) -> None:
    """Adds ``automations``: their ids. Each is found again by its name on the next run and
    brought back to the demo's definition."""
    ids = []
    for spec in demo_automations(demo):
        instance = Automation.objects.for_org(demo.org).filter(name=spec["name"]).first()
        automation = save_automation(org=demo.org, instance=instance, **spec)
        ids.append(str(automation.id))
    demo.manifest["automations"] = ids

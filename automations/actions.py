"""What each action type of the registry does, in the worker. ``perform`` never raises for
an action's own failure: it answers an ``Outcome`` whose ``error`` says what went wrong."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import re
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from automations import delivery
from automations.models import Automation, AutomationRun
from learn.api import Activity, Course, UnknownMembers, enroll_members
from lms.ids import parse_id
from organizations.api import Membership, Organization


@dataclass(frozen=True)
class Outcome:
    error: str | None = None
    response: dict[str, Any] | None = None
    skipped: bool = False  # done by doing nothing (an enrolment of a test event)


class ActionFailed(Exception):
    pass


def perform(run: AutomationRun, index: int) -> Outcome:
    action = run.revision.actions[index]  # as it was when the run's event happened
    try:
        return PERFORMERS[action["type"]](run, index, action["input"])
    except ActionFailed as exc:
        return Outcome(error=str(exc))
    except Exception as exc:  # an attempt that broke is a failed attempt, retried
        return Outcome(error=f"{type(exc).__name__}: {exc}"[:1000])


# --- send_email ------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_.]+)\s*\}\}")


def _member(run: AutomationRun, member_id: Any) -> Membership | None:
    if not member_id:
        return None
    return Membership.objects.filter(org_id=run.org_id, id=member_id).select_related("user").first()


def placeholders(run: AutomationRun) -> dict[str, str]:
    """The values ``{{ ... }}`` may name, for this run's event (text, never markup)."""
    data = run.event_data
    values = {"org.name": Organization.objects.get(id=run.org_id).name}
    learner = _member(run, data.get("memberId"))
    if learner is not None:
        values["learner.firstName"] = learner.user.first_name
        values["learner.email"] = learner.user.email
    if data.get("courseId"):
        course = Course.objects.filter(org_id=run.org_id, id=data["courseId"]).first()
        values["course.title"] = course.title if course else ""
    if data.get("activityId"):
        activity = Activity.objects.filter(org_id=run.org_id, id=data["activityId"]).first()
        values["activity.title"] = activity.title if activity else ""
    return values


def render(text: str, values: dict[str, str]) -> str:
    """``{{ name }}`` replaced by its value, unknown names by nothing. The values are
    inserted as they are, never read as templates themselves."""
    return _PLACEHOLDER.sub(lambda found: values.get(found.group(1), ""), text)


def _recipient(run: AutomationRun, to: str) -> str:
    if run.test:
        # A test event's e-mail goes to whoever sent the test (its example data's address,
        # ``services.send_test``), never to a learner or an address of the action.
        address = run.event_data.get("email")
        if not address:
            raise ActionFailed("There is no address of the member who sent this test.")
        return address
    if to == "learner":
        address = run.event_data.get("email")
    elif to == "inviter":
        inviter = _member(run, run.event_data.get("invitedBy"))
        address = inviter.user.email if inviter else None
    else:
        address = to
    if not address:
        raise ActionFailed(f"There is no {to} to write to for this event.")
    return address


def send_email(run: AutomationRun, index: int, data: dict) -> Outcome:
    values = placeholders(run)
    subject = " ".join(render(data["subject"], values).split())  # one line, whatever was in it
    send_mail(
        subject,
        render(data["body"], values),
        settings.DEFAULT_FROM_EMAIL,
        [_recipient(run, data["to"])],
    )
    return Outcome()


# --- enroll_in_course ------------------------------------------------------------------------


def enroll_in_course(run: AutomationRun, index: int, data: dict) -> Outcome:
    if run.test:
        return Outcome(skipped=True)  # a test event enrolls nobody
    course = Course.objects.filter(org_id=run.org_id, id=data["courseId"]).first()
    if course is None:
        raise ActionFailed("The course no longer exists.")
    member_id = parse_id(run.event_data.get("memberId"))
    if member_id is None:
        raise ActionFailed("The event's member no longer exists.")
    try:
        enroll_members(
            org_id=run.org_id,
            course_id=course.id,
            membership_ids=[member_id],
            depth=run.depth + 1,
        )
    except UnknownMembers:
        raise ActionFailed("The event's member no longer exists.") from None
    return Outcome()


# --- webhook ---------------------------------------------------------------------------------


def webhook_id(run: AutomationRun, index: int) -> str:
    """The delivery's id: the same for every attempt of this action of this run."""
    return f"msg_{run.id.hex}_{index}"


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks signature header value of a delivery."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def iso(moment) -> str:
    return moment.isoformat().replace("+00:00", "Z")


REFUSED = "refused: not a public address"


def _public_address(host: str, port: int, deadline: delivery.Deadline | None = None) -> str:
    """The address ``host`` resolves to, to connect to. Unless LMS_WEBHOOK_ALLOW_PRIVATE is
    on, a host with any address that is not public (``delivery.is_public``) is refused, and
    so is one that does not resolve, with the same words and no address: a run's
    ``lastError`` tells a tenant nothing of how names resolve inside the network, nor
    whether a name exists there."""
    deadline = deadline or delivery.Deadline(settings.LMS_WEBHOOK_DEADLINE_SECONDS)
    allow_private = settings.LMS_WEBHOOK_ALLOW_PRIVATE
    try:
        addresses = delivery.resolve(host, port, deadline)
    except delivery.Stalled:
        raise ActionFailed(_stalled(deadline)) from None
    except (socket.gaierror, UnicodeError):
        raise ActionFailed(REFUSED if not allow_private else "Cannot resolve the host.") from None
    if not allow_private and not all(delivery.is_public(address) for address in addresses):
        raise ActionFailed(REFUSED)
    return addresses[0]


def _stalled(deadline: delivery.Deadline) -> str:
    return f"No complete answer within {deadline.seconds:g} s."


# Set by the delivery itself: a custom header of these names is left out.
_RESERVED_HEADERS = {"host", "content-length", "content-type", "transfer-encoding", "connection"}


def webhook(run: AutomationRun, index: int, data: dict) -> Outcome:
    url = urlsplit(data["url"])
    https = url.scheme == "https"
    port = url.port or (443 if https else 80)
    automation = (
        Automation.objects.filter(org_id=run.org_id, id=run.automation_id)
        .only(
            "signing_secret",
            "previous_signing_secret",
            "secret_rotated_at",
            "older_signing_secret",
            "older_rotated_at",
        )
        .get()
    )
    event = {
        "type": run.trigger,
        "timestamp": iso(run.occurred_at),
        "data": run.event_data,
        "automationId": str(run.automation_id),
        "runId": str(run.id),
    }
    if run.test:  # a receiver tells a test send from a real event (whose body has no key)
        event["test"] = True
    body = json.dumps(event, separators=(",", ":")).encode()
    message_id, timestamp = webhook_id(run, index), int(time.time())
    headers = {
        **{
            name: value
            for name, value in data.get("headers", {}).items()
            if name.lower() not in _RESERVED_HEADERS and not name.lower().startswith("webhook-")
        },
        "Content-Type": "application/json",
        "User-Agent": "lms-webhooks/1",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        # During the overlap after a rotation, the new secret's signature and the old one's,
        # space-separated, as Standard Webhooks allows (CONTRACT 8.8).
        "webhook-signature": " ".join(
            sign(secret, message_id, timestamp, body)
            for secret in automation.signing_secrets(timezone.now())
        ),
    }
    target = (url.path or "/") + (f"?{url.query}" if url.query else "")
    # One deadline for the whole attempt, the name's resolution included (CONTRACT 8.8).
    deadline = delivery.Deadline(settings.LMS_WEBHOOK_DEADLINE_SECONDS)
    address = _public_address(url.hostname or "", port, deadline)
    try:
        answer = delivery.attempt(
            host=url.hostname or "",
            port=port,
            address=address,
            tls=https,
            method=data.get("method", "POST"),
            target=target,
            headers=headers,
            body=body,
            deadline=deadline,
        )
    except delivery.Stalled:
        raise ActionFailed(_stalled(deadline)) from None
    except delivery.TooLarge:
        raise ActionFailed(
            f"The answer's head is larger than {delivery.ANSWER_LIMIT // 1024} KiB."
        ) from None
    except (OSError, http.client.HTTPException) as exc:
        raise ActionFailed(f"{type(exc).__name__}: {exc}"[:1000]) from None
    response = {"status": answer.status, "durationMs": deadline.elapsed_ms(), "body": answer.text()}
    if 200 <= answer.status < 300:
        return Outcome(response=response)
    # Redirects are not followed: like any other answer that is not 2xx, tried again.
    return Outcome(error=f"The endpoint answered {answer.status}.", response=response)


PERFORMERS = {
    "send_email": send_email,
    "enroll_in_course": enroll_in_course,
    "webhook": webhook,
}

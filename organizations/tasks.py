"""Identity's work for the task framework's worker: e-mailing an invite's accept link
(CONTRACT 9.2) after the invite is committed.

The invite's token is stored only as a hash, so the task carries it sealed
(``organizations.sealing``, with a nonce of its own): the queue never holds a usable token.
A mail server that is down delays the mail: each failed attempt enqueues the next one after
``LMS_AUTOMATION_RETRY_BASE_SECONDS``, doubling, up to ``LMS_AUTOMATION_ATTEMPTS`` attempts,
as an automation's e-mail is retried; the last failure fails the task (logged by the
worker). Nothing is sent for an invite that is no longer pending, or whose token was
re-issued meanwhile."""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone
from django_tasks import task

from organizations import sealing
from organizations.models import INVITE_TOKEN_PREFIX, Invite, hash_token

logger = logging.getLogger(__name__)

_SALT = "organizations.invite_email"


def _material(invite_id: str, nonce: str) -> bytes:
    return f"{invite_id}\0{nonce}".encode()


def mail_invite(invite: Invite, raw_token: str) -> None:
    """Enqueue the e-mail of ``invite`` with its accept link (call it after the commit)."""
    nonce = secrets.token_hex(16)
    _enqueue(
        invite_id=str(invite.id),
        sealed_token=sealing.seal(raw_token, _SALT, _material(str(invite.id), nonce)),
        nonce=nonce,
        url=settings.LMS_INVITE_URL,
        attempt=1,
    )


def _enqueue(*, run_after=None, **kwargs) -> None:
    send_invite_email.using(queue_name=settings.LMS_TASKS_QUEUE, run_after=run_after).enqueue(
        **kwargs
    )


def delay_before_attempt(attempt: int) -> float:
    """Seconds to wait before attempt ``attempt`` (2, 3, ...): an automation's schedule."""
    return settings.LMS_AUTOMATION_RETRY_BASE_SECONDS * 2 ** (attempt - 2)


def invite_message(invite: Invite, link: str) -> tuple[str, str]:
    """The subject and body of the e-mail of ``invite``."""
    org = invite.org.name
    expires = invite.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    body = (
        f"Hello {invite.first_name},\n\n"
        f"You are invited to join {org}. Accept the invitation here:\n\n"
        f"{link}\n\n"
        f"The link works until {expires}. If you did not expect this e-mail, ignore it.\n"
    )
    return " ".join(f"You are invited to join {org}".split()), body


@task(queue_name=settings.LMS_TASKS_QUEUE)
def send_invite_email(invite_id: str, sealed_token: str, nonce: str, url: str, attempt: int) -> str:
    """Send the invite's e-mail; what happened, for the task's result."""
    invite = Invite.all_orgs.select_related("org").filter(id=invite_id).first()
    if invite is None or invite.status != Invite.State.PENDING:
        return "not sent: the invite is no longer pending"
    raw = sealing.unseal(
        sealed_token, _SALT, _material(invite_id, nonce), prefix=INVITE_TOKEN_PREFIX
    )
    if raw is None or hash_token(raw) != invite.token_hash:
        return "not sent: the invite's token was re-issued"
    subject, body = invite_message(invite, url.replace("{token}", raw))
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [invite.email])
    except Exception as error:
        if attempt >= settings.LMS_AUTOMATION_ATTEMPTS:
            raise
        delay = delay_before_attempt(attempt + 1)
        logger.warning(
            "invite e-mail attempt %s failed (%s); attempt %s in %ss",
            attempt,
            type(error).__name__,
            attempt + 1,
            delay,
            extra={"invite_id": invite_id},
        )
        _enqueue(
            run_after=timezone.now() + timedelta(seconds=delay),
            invite_id=invite_id,
            sealed_token=sealed_token,
            nonce=nonce,
            url=url,
            attempt=attempt + 1,
        )
        return f"attempt {attempt} failed; retrying"
    return "sent"

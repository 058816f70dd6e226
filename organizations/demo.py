"""seed_demo part of this app beyond members and tokens: the invites (see docs/demo.md)."""

from datetime import timedelta

from django.utils import timezone

from lms.demo import DemoOrg
from organizations.models import Invite, Membership
from organizations.services import create_invite, revoke_invite

# manifest key -> (first name, last name); the e-mail is invite.<key>@<the org's domain>.
INVITEES = {
    "pending": ("Paula", "Pending"),
    "expired": ("Ethan", "Expired"),
    "accepted": ("Ada", "Accepted"),
    "revoked": ("Rita", "Revoked"),
}
# A pending invite to the e-mail of the other demo organization's learner (Leo Learner),
# under other names: accepting it answers these names, never the account's.
EXISTING_ACCOUNT_NAMES = ("Lena", "Invitee")


def _other_learner_email(demo: DemoOrg) -> str:
    """The e-mail address seed_demo gives the other demo organization's learner."""
    from organizations.management.commands.seed_demo import ORGS

    [domain] = [domain for key, _, domain in ORGS if key != demo.key]
    return f"learner@{domain}"


def seed(demo: DemoOrg) -> None:
    """Adds ``invites``: one fresh token per state, and ``existingAccount``. Tokens exist only
    as hashes, so every run replaces the previous run's demo invites (by their e-mail
    addresses) with new ones; the pending ones can be accepted once per run."""
    owner: Membership = demo.members["owner"]
    domain = owner.user.email.split("@", 1)[1]
    emails = {key: f"invite.{key}@{domain}" for key in INVITEES}
    emails["existingAccount"] = _other_learner_email(demo)
    Invite.objects.for_org(demo.org).filter(email__in=emails.values()).delete()
    # Whoever accepted a previous run's invite leaves the demo organization (with their
    # tokens), so every run starts from the same members.
    Membership.objects.for_org(demo.org).filter(user__email__in=emails.values()).delete()
    tokens = {}
    for key, (first_name, last_name) in INVITEES.items():
        invite, raw = create_invite(
            org=demo.org,
            email=emails[key],
            first_name=first_name,
            last_name=last_name,
            invited_by=owner,
        )
        if key == "expired":
            Invite.objects.filter(org=demo.org, pk=invite.pk).update(
                expires_at=timezone.now() - timedelta(days=1)
            )
        elif key == "accepted":
            # Accepting adds a membership, which the demo's member list must not grow by.
            Invite.objects.filter(org=demo.org, pk=invite.pk).update(
                state=Invite.State.ACCEPTED, accepted_at=timezone.now()
            )
        elif key == "revoked":
            revoke_invite(invite=invite)
        tokens[key] = raw
    first_name, last_name = EXISTING_ACCOUNT_NAMES
    _, tokens["existingAccount"] = create_invite(
        org=demo.org,
        email=emails["existingAccount"],
        first_name=first_name,
        last_name=last_name,
        invited_by=owner,
    )
    demo.manifest["invites"] = tokens

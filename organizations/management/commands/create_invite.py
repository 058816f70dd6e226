from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from organizations.management.options import ORG_HELP, email_option, org_option
from organizations.models import INVITE_LIFETIME, Invite, Membership
from organizations.services import create_invite

MAX_DAYS = 365
NAME_MAX = Invite._meta.get_field("first_name").max_length


# The option that set each field, for the messages.
OPTION_OF = {
    "email": "--email",
    "first_name": "--first-name",
    "last_name": "--last-name",
    "role": "--role",
    "expires_at": "--expires-in-days",
}


class Command(BaseCommand):
    help = (
        "Invite someone to an organization and print the invite token once (on stdout), "
        "with the path where it is read."
    )

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help=ORG_HELP)
        parser.add_argument("--email", required=True, help="The invitee's e-mail address.")
        parser.add_argument("--first-name", required=True, help="The invitee's first name.")
        parser.add_argument("--last-name", required=True, help="The invitee's last name.")
        parser.add_argument(
            "--role",
            choices=[role.value for role in Membership.Role],
            default=Membership.Role.LEARNER.value,
            help="The role the invite grants (default: learner).",
        )
        parser.add_argument(
            "--expires-in-days",
            type=int,
            default=INVITE_LIFETIME.days,
            help=f"Days until the invite expires, 1..{MAX_DAYS} (default: {INVITE_LIFETIME.days}).",
        )

    def handle(self, *args, **options):
        email = email_option(options["email"])
        names = {}
        for option in ("first_name", "last_name"):
            value = options[option].strip()
            flag = "--" + option.replace("_", "-")
            if not value:
                raise CommandError(f"{flag} must not be empty.")
            if len(value) > NAME_MAX:
                raise CommandError(f"{flag} must be at most {NAME_MAX} characters.")
            names[option] = value
        days = options["expires_in_days"]
        if not 1 <= days <= MAX_DAYS:
            raise CommandError(f"--expires-in-days must be between 1 and {MAX_DAYS}.")
        org = org_option(options["org"])
        try:
            invite, raw = create_invite(
                org=org,
                email=email,
                role=options["role"],
                expires_at=timezone.now() + timedelta(days=days),
                **names,
            )
        except ValidationError as exc:
            field, messages = next(iter(exc.message_dict.items()))
            raise CommandError(f"{OPTION_OF.get(field, field)}: {messages[0]}") from None
        self.stderr.write(
            f"Invite for {invite.email} ({invite.role}) to {org.name}, expires "
            f"{invite.expires_at:%Y-%m-%d %H:%M} UTC. The token is shown only this once:"
        )
        self.stdout.write(raw)
        self.stderr.write(f"Read it at: GET /api/organizations/invites/{raw}")

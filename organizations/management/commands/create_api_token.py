from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from organizations.management.options import ORG_HELP, email_option, org_option
from organizations.models import Membership
from organizations.services import add_member, create_api_token


class Command(BaseCommand):
    help = (
        "Create an API token for a member of an organization and print it once. "
        "With --role, the membership is created (or its role changed) first."
    )

    def add_arguments(self, parser):
        parser.add_argument("--email", required=True, help="The member's e-mail address.")
        parser.add_argument("--org", required=True, help=ORG_HELP)
        parser.add_argument(
            "--role",
            choices=[role.value for role in Membership.Role],
            help="Create the membership with this role (or change it) if needed.",
        )
        parser.add_argument("--name", default="", help="A label for the token.")
        parser.add_argument(
            "--expires-in-days",
            type=int,
            help="Days until the token expires (default: never).",
        )

    def handle(self, *args, **options):
        email = email_option(options["email"])
        org = org_option(options["org"])
        days = options["expires_in_days"]
        if days is not None and days < 1:
            raise CommandError("--expires-in-days must be at least 1.")

        if options["role"]:
            membership = add_member(org=org, email=email, role=options["role"])
        else:
            membership = (
                Membership.objects.select_related("user").filter(org=org, user__email=email).first()
            )
            if membership is None:
                raise CommandError(
                    f"{email} is not a member of {org.name}; pass --role to add them."
                )
        expires_at = timezone.now() + timedelta(days=days) if days else None
        _, raw = create_api_token(
            membership=membership, name=options["name"], expires_at=expires_at
        )
        self.stderr.write(
            f"Token for {email} ({membership.role}) in {org.name}"
            + (f", expires {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else "")
            + ". It is shown only this once:"
        )
        self.stdout.write(raw)

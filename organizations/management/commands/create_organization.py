import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from lms.errors import Conflict
from organizations.management.options import email_option
from organizations.services import create_organization


class Command(BaseCommand):
    help = (
        "Create an organization with its owner (the user is created if needed) and print the "
        "owner's API token once. With --staff the owner may also sign in to the admin for "
        "this organization, and a new password is printed once."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="The organization's name (unique, in any case).")
        parser.add_argument("--owner", required=True, help="The owner's e-mail address.")
        parser.add_argument(
            "--staff",
            action="store_true",
            help="Let the owner sign in to the admin (a password is printed once, unless "
            "they have one already).",
        )
        parser.add_argument(
            "--json", action="store_true", help="Print only a JSON object on stdout."
        )

    def handle(self, *args, **options):
        name = options["name"].strip()
        if not name:
            raise CommandError("The organization's name is empty.")
        email = email_option(options["owner"])
        try:
            created = create_organization(name=name, owner_email=email, staff=options["staff"])
        except Conflict as exc:
            raise CommandError(f"{exc.message} Nothing was created.") from None
        except ValidationError as exc:
            messages = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in exc)
            raise CommandError(f"The organization cannot be created: {messages}") from None
        org, user = created.org, created.owner.user
        if options["json"]:
            owner = {"email": user.email, "token": created.token}
            if options["staff"]:
                owner["password"] = created.password
            self.stdout.write(
                json.dumps({"id": str(org.id), "name": org.name, "owner": owner}, indent=2)
            )
            return
        out = self.stdout
        out.write(self.style.SUCCESS(f"Organization {org.name!r} created (id {org.id})."))
        out.write(f"Owner: {user.email}")
        out.write(f"API token (shown only this once): {created.token}")
        if options["staff"]:
            if created.password:
                out.write(f"Admin password (shown only this once): {created.password}")
            else:
                out.write("Admin: the owner signs in with the password they already have.")
            out.write("The owner may now sign in at /admin/ and sees this organization there.")

import json
import os
import secrets

from axes.utils import reset
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from lms.demo import DemoOrg, demo_parts
from organizations import manifest as demo_manifest
from organizations.models import Membership, Organization, User
from organizations.services import add_member, create_api_token, revoke_tokens

DEMO_TOKEN_NAME = "demo"
ADMIN_EMAIL = "admin@lms.example"
ORGS = [
    ("org", "Demo Academy", "demo-academy.example"),
    ("otherOrg", "Northwind Institute", "northwind.example"),
]
# (key in the manifest, role of the membership, first name, last name)
PEOPLE = [
    ("owner", "owner", "Olivia", "Owner"),
    ("admin", "admin", "Adam", "Admin"),
    ("instructor", "instructor", "Ines", "Instructor"),
    ("learner", "learner", "Leo", "Learner"),
    ("outsider", "learner", "Oscar", "Outsider"),
]


def served_at() -> str:
    """The base URL the server started by ``make run`` answers on: LMS_BIND, as gunicorn
    reads it (a wildcard address is reached on the loopback)."""
    bind = os.environ.get("LMS_BIND") or "127.0.0.1:8000"
    host, _, port = bind.rpartition(":")
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def demo_is_seeded() -> bool:
    """Whether this database holds the demo: its first organization with its owner."""
    _, name, domain = ORGS[0]
    return Membership.all_orgs.filter(
        org__name=name, user__email=f"{PEOPLE[0][0]}@{domain}"
    ).exists()


class Command(BaseCommand):
    help = (
        "Create (or refresh) the demo data set: two organizations with members, fresh API "
        "tokens and every area's demo records. Idempotent; prints the tokens and writes "
        "the manifest to var/demo.json (LMS_DEMO_MANIFEST). Refreshing resets the demo "
        "members' progress and revokes the previous demo tokens; --if-missing seeds only a "
        "database without the demo and otherwise prints the manifest, changing nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--json", action="store_true", help="Print only the JSON manifest on stdout."
        )
        parser.add_argument(
            "--if-missing",
            action="store_true",
            help="Seed only when the database has no demo yet; otherwise change nothing and "
            "print the manifest (as demo_manifest does). `make run` uses it.",
        )

    def handle(self, *args, **options):
        as_json = options["json"]
        if options["if_missing"] and demo_is_seeded():
            self.stdout.write("The demo is already seeded: nothing re-seeded (`make seed` does).")
            try:
                call_command("demo_manifest", json=as_json, stdout=self.stdout, stderr=self.stderr)
            except CommandError as error:
                self.stderr.write(self.style.WARNING(f"{error} `make seed` re-seeds the demo."))
            return
        log = self.stderr if as_json else self.stdout
        with transaction.atomic():
            manifest = {}
            for key, name, domain in ORGS:
                demo = self.seed_org(key, name, domain)
                for part in demo_parts():
                    log.write(f"  seeding {part.__name__.split('.')[0]} for {name}")
                    part.seed(demo)
                demo.manifest["staff"] = self.sign_in(demo.members["admin"].user, staff=True)
                manifest[key] = demo.manifest
            admin, _ = User.objects.get_or_create(email=ADMIN_EMAIL)
            manifest["superuser"] = self.sign_in(admin, staff=True, superuser=True)

        # After the commit: the file never names tokens of a run that rolled back.
        path = demo_manifest.save(manifest)
        if as_json:
            self.stdout.write(json.dumps(manifest, indent=2))
            return
        self.print_summary(manifest, path)

    def sign_in(self, user: User, *, staff: bool, superuser: bool = False) -> dict[str, str]:
        """Make ``user`` an admin user with a fresh password (and lift any sign-in lockout
        of theirs); their e-mail and password for the manifest."""
        password = secrets.token_urlsafe(12)
        user.is_staff, user.is_superuser = staff, superuser
        user.set_password(password)
        user.save()
        reset(username=user.email)
        return {"email": user.email, "password": password}

    def seed_org(self, key: str, name: str, domain: str) -> DemoOrg:
        org = Organization.objects.filter(name=name).order_by("created_at").first()
        if org is None:
            org = Organization.objects.create(name=name)
        members: dict[str, Membership] = {}
        tokens: dict[str, str] = {}
        for person, role, first, last in PEOPLE:
            membership = add_member(
                org=org,
                email=f"{person}@{domain}",
                role=role,
                first_name=first,
                last_name=last,
            )
            revoke_tokens(membership.tokens.filter(name=DEMO_TOKEN_NAME))
            _, raw = create_api_token(membership=membership, name=DEMO_TOKEN_NAME)
            members[person] = membership
            tokens[person] = raw
        return DemoOrg(
            org=org,
            key=key,
            members=members,
            manifest={"id": str(org.id), "name": org.name, "tokens": tokens},
        )

    def print_summary(self, manifest: dict, path) -> None:
        self.stdout.write(self.style.SUCCESS("Demo data is ready."))
        for line in demo_manifest.summary(manifest, base=served_at(), path=path):
            self.stdout.write(line)
        self.stdout.write(
            "(tokens and passwords are new on every seed; older demo tokens are revoked. "
            "`make run`, `make serve` and `manage.py demo_manifest` print these again "
            "without issuing anything; `make seed` re-seeds)"
        )

import json

from django.core.management.base import BaseCommand, CommandError

from organizations import manifest as demo_manifest
from organizations.management.commands.seed_demo import served_at


class Command(BaseCommand):
    help = (
        "Print the demo manifest the last seed_demo wrote (var/demo.json): its path, tokens "
        "and the ids a first call needs. Issues and revokes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--json", action="store_true", help="Print only the JSON manifest on stdout."
        )

    def handle(self, *args, **options):
        path = demo_manifest.manifest_path()
        manifest = demo_manifest.load()
        if manifest is None:
            raise CommandError(
                f"No demo manifest at {path}: seed the demo data first (`make run`, or "
                "`python manage.py seed_demo`)."
            )
        if not demo_manifest.tokens_are_live(manifest):
            self.stderr.write(
                self.style.WARNING(
                    f"The tokens in {path} no longer work on this database (a later seed_demo "
                    "revoked them, or they are another database's): `make seed` re-seeds the demo."
                )
            )
        if options["json"]:
            self.stdout.write(json.dumps(manifest, indent=2))
            return
        for line in demo_manifest.summary(manifest, base=served_at(), path=path):
            self.stdout.write(line)

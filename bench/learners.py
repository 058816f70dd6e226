"""Learners of their own for the load bench: ``LEARNERS`` members of each demo organization,
enrolled in its first course, each with an API token (bench/load.py's "progress, many
learners"). Run by bench/load.py after ``seed_demo``, as

    DJANGO_SETTINGS_MODULE=lms.settings python bench/learners.py MANIFEST_JSON

It prints ``{org id: [raw token, ...]}``. Idempotent: the members and enrollments are found
again; each run issues new tokens."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LEARNERS = 16


def main(manifest_path: str) -> int:
    import django

    django.setup()
    manifest = json.loads(Path(manifest_path).read_text())
    print(json.dumps(issue(manifest, LEARNERS)))
    return 0


def issue(manifest: dict, count: int) -> dict[str, list[str]]:
    """``count`` learners of each organization of ``manifest`` (found again when they
    exist), enrolled in its first course, each with a new token: {org id: [raw token, ...]}."""
    from learn.models import Course
    from learn.services import enroll
    from organizations.models import Membership, Organization
    from organizations.services import add_member, create_api_token

    tokens: dict[str, list[str]] = {}
    for key in ("org", "otherOrg"):
        if not manifest.get(key):
            continue
        org = Organization.objects.get(id=manifest[key]["id"])
        course = Course.objects.for_org(org).get(id=manifest[key]["courses"][0]["id"])
        raws = []
        for number in range(count):
            membership = add_member(
                org=org,
                email=f"bench-learner-{number}@{str(org.id)[:8]}.example",
                role=Membership.Role.LEARNER,
            )
            enroll(membership=membership, course=course)
            raws.append(create_api_token(membership=membership, name="bench")[1])
        tokens[str(org.id)] = raws
    return tokens


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""The demo manifest on disk: what ``seed_demo`` issued (ids, tokens, passwords), kept in
``var/demo.json`` (``settings.LMS_DEMO_MANIFEST``) so that it can be read again without
issuing anything (``demo_manifest``, ``make serve``). Tokens are stored only as hashes, so
this file is the one place they can be read again: it is written readable by its owner only.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings


def manifest_path() -> Path:
    return Path(settings.LMS_DEMO_MANIFEST)


def save(manifest: dict[str, Any]) -> Path:
    """Writes ``manifest`` to ``manifest_path()`` with mode 0600, atomically (a reader sees
    the previous manifest or this one, never half of one)."""
    path = manifest_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".demo-", suffix=".json", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(manifest, out, indent=2)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def load() -> dict[str, Any] | None:
    """The saved manifest, or None when there is none."""
    try:
        return json.loads(manifest_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def tokens_are_live(manifest: dict[str, Any]) -> bool:
    """Whether the manifest's learner token still works on this database (a later
    ``seed_demo`` revoked it, or the manifest is another database's)."""
    from organizations.models import ApiToken, hash_token

    raw = manifest.get("org", {}).get("tokens", {}).get("learner")
    if not raw:
        return False
    token = ApiToken.all_orgs.filter(key_hash=hash_token(raw)).first()
    return token is not None and token.is_active


def summary(manifest: dict[str, Any], *, base: str, path: Path) -> list[str]:
    """The manifest for a person: where it is, the tokens, the ids a first call needs with
    the call to try, and how to sign in to the admin."""
    org = manifest["org"]
    lines = [f"Manifest (every id, token and password): {path}", ""]
    for data in (org, manifest.get("otherOrg")):
        if not data:
            continue
        lines.append(f"{data['name']} (organization {data['id']})")
        lines += [f"  {role:<11} {token}" for role, token in data["tokens"].items()]
        lines.append("")
    lines += _first_ids(org)
    learner = org["tokens"]["learner"]
    lines += [
        "",
        "Try it:",
        f'  curl -H "Authorization: Bearer {learner}" "{base}/api/bundles?search=python"',
        "",
        f"API docs: {base}/api/docs/ (Authorize with a token above)",
    ]
    superuser = manifest.get("superuser")
    if superuser:
        lines.append(
            f"Admin: {base}/admin/  superuser {superuser['email']} / {superuser['password']}"
        )
    for data in (org, manifest.get("otherOrg")):
        staff = (data or {}).get("staff")
        if staff:
            lines.append(f"  staff of {data['name']} only: {staff['email']} / {staff['password']}")
    return lines


def _first_ids(org: dict[str, Any]) -> list[str]:
    """Ids of the first organization a first call needs, each with a call that uses it."""
    lines = [
        f"Ids to start with ({org['name']}; call as its learner unless said):",
        "  courses    (the learner's)  GET /api/learn/courses",
    ]
    courses = org.get("courses") or []
    if courses:
        course = courses[0]
        lines.append(f"  course     {course['id']}  GET /api/learn/courses/{course['id']}")
        for rule, activity in (course.get("rules") or {}).items():
            lines.append(f"  activity   {activity}  ({rule} rule) POST /api/learn/progress")
    downloads, assets = org.get("downloads") or [], org.get("assets") or []
    if downloads:
        lines.append(f"  download   {downloads[0]}  GET /api/downloads/{downloads[0]}/assets")
    if len(downloads) > 1 and assets:
        lines.append(
            f"  asset      {assets[0]}  POST /api/downloads/{downloads[1]}/assets "
            f'{{"assetId": "{assets[0]}"}} (as the instructor)'
        )
    pending = (org.get("invites") or {}).get("pending")
    if pending:
        lines.append(f"  invite     {pending}  GET /api/organizations/invites/{pending}")
    return lines

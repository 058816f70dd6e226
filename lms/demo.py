"""What every app's part of ``manage.py seed_demo`` receives (see shared DEMO.md).

Each app has ``<app>/demo.py`` with ``seed(demo: DemoOrg) -> None``: it creates its records
for ``demo.org`` idempotently (a second run leaves one data set, not two) and adds its
keys to ``demo.manifest``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Run in this order; the manifest keys come out in this order too.
DEMO_PARTS = [
    "downloads.demo",
    "learn.demo",
    "bundles.demo",
    "organizations.demo",
    "automations.demo",
]


@dataclass
class DemoOrg:
    org: Any  # organizations.models.Organization
    key: str  # "org" or "otherOrg"
    members: dict[str, Any]  # role name ("owner", ..., "outsider") -> Membership
    manifest: dict[str, Any] = field(default_factory=dict)

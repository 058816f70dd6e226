"""What every app's part of ``manage.py seed_demo`` receives (see docs/demo.md).

Each app has ``<app>/demo.py`` with ``seed(demo: DemoOrg) -> None``: it creates its records
for ``demo.org`` idempotently (a second run leaves one data set, not two) and adds its
keys to ``demo.manifest``.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from django.apps import apps


def demo_parts() -> list[ModuleType]:
    """Every installed app's ``demo`` module, in the order of INSTALLED_APPS (an app's part
    may use what the apps before it created)."""
    parts = []
    for config in apps.get_app_configs():
        if importlib.util.find_spec(f"{config.name}.demo") is not None:
            parts.append(importlib.import_module(f"{config.name}.demo"))
    return parts


@dataclass
class DemoOrg:
    org: Any  # organizations.models.Organization
    key: str  # "org" or "otherOrg"
    members: dict[str, Any]  # role name ("owner", ..., "outsider") -> Membership
    manifest: dict[str, Any] = field(default_factory=dict)

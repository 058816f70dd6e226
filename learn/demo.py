"""seed_demo part of this app (see shared DEMO.md and lms/demo.py)."""

from lms.demo import DemoOrg


def seed(demo: DemoOrg) -> None:
    """Adds this app's keys to ``demo.manifest``."""

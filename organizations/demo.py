"""seed_demo part of this app beyond members and tokens: the invites (see shared DEMO.md)."""

from lms.demo import DemoOrg


def seed(demo: DemoOrg) -> None:
    """Adds ``invites`` to the manifest."""

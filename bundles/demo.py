"""seed_demo part of this app (see docs/demo.md and lms/demo.py): 40 bundles per
organization, with distinct names, "Python" in several cases, a "%" and a "_"."""

from datetime import UTC, datetime, timedelta

from bundles.models import Bundle
from bundles.services import NewBundle, insert_bundles
from lms.demo import DemoOrg

NAMES = [
    "Python for Absolute Beginners",
    "Advanced python Automation",
    "PYTHON Data Structures Crash Course",
    "Data Science with Python and pandas",
    "100% Practical SQL",
    "snake_case Naming Conventions Workshop",
    "JavaScript Essentials",
    "TypeScript in Practice",
    "React Front-end Bootcamp",
    "Django REST Framework Deep Dive",
    "Kubernetes for Developers",
    "Docker from Zero",
    "AWS Cloud Practitioner Prep",
    "Excel Formulas and Pivot Tables",
    "Power BI Dashboards",
    "Statistics Refresher",
    "Machine Learning Foundations",
    "Deep Learning with PyTorch",
    "Git and GitHub Workflow",
    "Linux Command Line Basics",
    "Cybersecurity Awareness",
    "UX Research Methods",
    "Figma for Teams",
    "Agile and Scrum in Practice",
    "Project Management Professional Prep",
    "Leadership for New Managers",
    "Public Speaking Confidence",
    "Negotiation Skills",
    "Digital Marketing Starter Pack",
    "Copywriting That Converts",
    "Photography Basics",
    "Video Editing with DaVinci Resolve",
    "Spanish for Travelers",
    "Français pour débutants",
    "Accounting Fundamentals",
    "Time Management Toolkit",
    "Customer Success Playbook",
    "Rust Systems Programming",
    "Go Concurrency Patterns",
    "Café Latte Art at Home",
]
# Fixed times, one bundle a week, so every run lists the same order; every third bundle
# was edited later, so sorting by updatedAt differs from sorting by createdAt.
FIRST_CREATED = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


def seed(demo: DemoOrg) -> None:
    """Adds the bundles the organization lacks (by name) and ``bundles`` to the manifest."""
    existing = set(
        Bundle.objects.for_org(demo.org).filter(name__in=NAMES).values_list("name", flat=True)
    )
    missing = []
    for index, name in enumerate(NAMES):
        if name in existing:
            continue
        created = FIRST_CREATED + timedelta(weeks=index)
        updated = created + timedelta(days=60 + index) if index % 3 == 0 else created
        missing.append(NewBundle(name=name, created_at=created, updated_at=updated))
    insert_bundles(org=demo.org, bundles=missing)
    demo.manifest["bundles"] = len(NAMES)

"""Realistic made-up catalogue data for load and scale testing (``generate_bundles``).

Pure functions of a ``random.Random``: the same seed gives the same catalogue. Topics follow
a long-tailed (Zipf-like) popularity, as real catalogues do, so a search for a popular topic
matches many rows and one for a niche topic with a format and an edition matches few.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from datetime import datetime, timedelta

LEVELS = [
    "Introduction to",
    "Foundations of",
    "Practical",
    "Applied",
    "Advanced",
    "Mastering",
    "Essential",
    "Hands-on",
    "Modern",
    "The Complete",
    "Professional",
    "Fast-track",
    "Beginner's",
    "Everyday",
]

# Most popular first; the weights fall off as 1/rank.
TOPICS = [
    "Python",
    "Excel",
    "JavaScript",
    "SQL",
    "Project Management",
    "Data Analysis",
    "Machine Learning",
    "Leadership",
    "Digital Marketing",
    "Java",
    "React",
    "Public Speaking",
    "AWS",
    "Cybersecurity",
    "UX Design",
    "Statistics",
    "Docker",
    "Kubernetes",
    "Linux",
    "TypeScript",
    "Power BI",
    "Accounting",
    "Negotiation",
    "Photography",
    "Agile and Scrum",
    "Product Management",
    "C#",
    "Go",
    "Git",
    "Copywriting",
    "Spanish",
    "Video Editing",
    "Django",
    "Tableau",
    "Azure",
    "Figma",
    "Rust",
    "French",
    "Time Management",
    "Network Engineering",
    "Japanese",
    "Blender 3D",
    "Customer Success",
    "Bookkeeping",
    "Español para principiantes",
    "Café Latte Art",
    "Data_Engineering",
    "Scala",
    "Kotlin",
    "Swift",
    "R",
    "PostgreSQL",
    "GraphQL",
    "Terraform",
    "Ökonomie",
    "Elixir",
    "Haskell",
    "Erlang",
    "Fortran",
    "COBOL",
]
TOPIC_CUM_WEIGHTS = list(itertools.accumulate(1 / rank for rank in range(1, len(TOPICS) + 1)))

FORMATS = [
    "Bundle",
    "Bootcamp",
    "Starter Pack",
    "Learning Path",
    "Masterclass",
    "Workshop Series",
    "Certification Prep",
    "Toolkit",
    "Collection",
    "Crash Course",
]

EDITIONS = [
    *(f"({year} Edition)" for year in range(2018, 2027)),
    "for Teams",
    "for Beginners",
    "for Managers",
    "Vol. 2",
    "Vol. 3",
    "- 100% Hands-on",
    "Part 1",
    "Part 2",
]


def names(rng: random.Random) -> Iterator[str]:
    """Endless bundle names like "Practical Python Bootcamp (2024 Edition)". About a third
    carry an edition; the same name recurs, as in any large catalogue."""
    while True:
        level = rng.choice(LEVELS)
        topic = rng.choices(TOPICS, cum_weights=TOPIC_CUM_WEIGHTS)[0]
        name = f"{level} {topic} {rng.choice(FORMATS)}"
        if rng.random() < 0.35:
            name = f"{name} {rng.choice(EDITIONS)}"
        yield name


def timestamps(
    rng: random.Random, count: int, start: datetime, end: datetime
) -> Iterator[tuple[datetime, datetime]]:
    """``count`` (created, updated) pairs with creation times rising from ``start`` to
    ``end`` (a catalogue grows over time, and rising keys keep index inserts cheap) and
    jittered within their slot. Four in ten were updated later, at a random time before
    ``end``; the rest never were (updated == created)."""
    slot = (end - start) / max(count, 1)
    for index in range(count):
        created = start + slot * (index + rng.random())
        updated = created
        if rng.random() < 0.4:
            updated = created + (end - created) * rng.random()
        yield created, updated


def default_span(now: datetime) -> tuple[datetime, datetime]:
    """The last five years up to ``now``."""
    return now - timedelta(days=5 * 365), now

"""The admin as tight as the API: a staff member of one organization crawls every changelist
and add page the admin index links to, and no id or name of another organization appears in
any filter, choice, autocomplete or inline."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from automations.models import AutomationRunAction
from bundles.models import Bundle, BundleCourse, BundleDownload
from learn.models import Enrollment, Progress, ProgressReport
from organizations.models import Membership
from tests.automations.factories import AutomationFactory, make_run
from tests.downloads.factories import AssetFactory, DownloadFactory, link
from tests.factories import UserFactory
from tests.helpers import make_member
from tests.learn.factories import ActivityFactory
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db

MARK = "Zq9foreign"


def populate(org, label: str) -> list[str]:
    """One of every record in ``org``, names marked with ``label``; their ids and names."""
    member = make_member(org, user=UserFactory(email=f"{label.lower()}-learner@example.com"))
    download = DownloadFactory(org=org, name=f"{label} download")
    asset = AssetFactory(org=org, name=f"{label} asset", content_type=f"video/{label.lower()}")
    link(download, asset)
    activity = ActivityFactory(
        org=org,
        title=f"{label} activity",
        module__org=org,
        module__title=f"{label} module",
        module__course__org=org,
        module__course__title=f"{label} course",
    )
    course = activity.course
    enrollment = Enrollment.all_orgs.create(org=org, course=course, membership=member.membership)
    progress = Progress.all_orgs.create(
        org=org,
        membership=member.membership,
        activity=activity,
        status="in-progress",
        started_at=timezone.now(),
    )
    ProgressReport.all_orgs.create(
        org=org, progress=progress, position=0, type=f"{label}type", payload={}, request_id="r"
    )
    bundle = Bundle.all_orgs.create(org=org, name=f"{label} bundle")
    BundleCourse.all_orgs.create(org=org, bundle=bundle, course=course)
    BundleDownload.all_orgs.create(org=org, bundle=bundle, download=download)
    automation = AutomationFactory(org=org, name=f"{label} automation")
    run = make_run(
        automation,
        event_data={"email": f"{label.lower()}-learner@example.com"},
        status="failed",
    )
    AutomationRunAction.all_orgs.create(
        org=org, run=run, index=0, status="failed", attempts=5, last_error=f"{label} error"
    )
    invite, _ = make_invite(org, email=f"{label.lower()}-invitee@example.com")
    records = [member.membership, download, asset, activity, course, enrollment, progress]
    records += [bundle, automation, run, invite, activity.module, org]
    return [str(r.pk) for r in records] + [
        org.name,
        f"{label} download",
        f"{label} asset",
        f"{label} course",
        f"{label} module",
        f"{label} activity",
        f"{label} bundle",
        f"{label} automation",
        f"{label} error",
        f"{label.lower()}-learner@example.com",
        f"{label.lower()}-invitee@example.com",
        f"{label}type",
        f"video/{label.lower()}",
    ]


def test_a_staff_member_of_one_organization_sees_nothing_of_another(org, other_org):
    other_org.name = f"{MARK} Organization"
    other_org.save()
    populate(org, "Mine")
    secrets = populate(other_org, MARK)
    user = UserFactory(is_staff=True, email="staff-admin@example.com")
    make_member(org, Membership.Role.ADMIN, user=user)
    client = Client()
    client.force_login(user)

    index = client.get("/admin/")
    assert index.status_code == 200
    pages = sorted(
        set(re.findall(r'href="(/admin/[a-z_]+/[a-z_]+/(?:add/)?)"', index.content.decode()))
    )
    assert len(pages) >= 20, pages  # every model's list, and its add page where allowed
    crawled = 0
    for url in pages:
        response = client.get(url)
        assert response.status_code in (200, 403), (url, response.status_code)
        if response.status_code != 200:
            continue
        crawled += 1
        page = response.content.decode()
        leaked = [secret for secret in secrets if secret in page]
        assert not leaked, (url, leaked)
        # Every filter choice of a list, followed, stays inside the organization too.
        for query in sorted(set(re.findall(r'href="(\?[^"]+)"', page)))[:40]:
            filtered = client.get(url + query.replace("&amp;", "&"))
            assert filtered.status_code in (200, 302), (url, query)
            leaked = [secret for secret in secrets if secret in filtered.content.decode()]
            assert not leaked, (url, query, leaked)
    assert crawled >= 15


def test_the_enrollment_course_filter_lists_only_the_organizations_courses(org, other_org):
    mine, theirs = populate(org, "Mine"), populate(other_org, MARK)
    user = UserFactory(is_staff=True)
    make_member(org, Membership.Role.ADMIN, user=user)
    client = Client()
    client.force_login(user)
    page = client.get("/admin/learn/enrollment/").content.decode()
    assert "Mine course" in page
    assert f"{MARK} course" not in page
    assert not [secret for secret in theirs if secret in page]
    assert mine

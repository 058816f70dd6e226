"""A bundle groups courses and downloads of its own organization, edited in the admin."""

import pytest
from django.test import Client

from bundles.models import Bundle, BundleCourse, BundleDownload
from tests.downloads.factories import DownloadFactory
from tests.factories import UserFactory
from tests.learn.factories import CourseFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_client() -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def form(org, name: str, *, courses=(), downloads=()) -> dict:
    data = {"org": str(org.id), "name": name, "description": ""}
    for prefix, items, field in (
        ("bundlecourse_set", courses, "course"),
        ("bundledownload_set", downloads, "download"),
    ):
        data.update(
            {
                f"{prefix}-TOTAL_FORMS": str(len(items)),
                f"{prefix}-INITIAL_FORMS": "0",
                f"{prefix}-MIN_NUM_FORMS": "0",
                f"{prefix}-MAX_NUM_FORMS": "1000",
            }
        )
        for index, item in enumerate(items):
            data[f"{prefix}-{index}-{field}"] = str(item.id)
    return data


def test_admin_saves_a_bundle_with_its_courses_and_downloads(superuser_client, org):
    course, download = CourseFactory(org=org), DownloadFactory(org=org)
    response = superuser_client.post(
        "/admin/bundles/bundle/add/",
        form(org, "Starter pack", courses=[course], downloads=[download]),
    )
    assert response.status_code == 302, response.content.decode()[-2000:]
    bundle = Bundle.all_orgs.get(name="Starter pack")
    assert list(bundle.courses.all()) == [course]
    assert list(bundle.downloads.all()) == [download]
    assert {item.org_id for item in BundleCourse.all_orgs.all()} == {org.id}
    assert {item.org_id for item in BundleDownload.all_orgs.all()} == {org.id}


def test_admin_refuses_another_organizations_course(superuser_client, org, other_org):
    foreign = CourseFactory(org=other_org)
    response = superuser_client.post(
        "/admin/bundles/bundle/add/", form(org, "Mixed pack", courses=[foreign])
    )
    assert response.status_code == 200
    assert "Pick one of the bundle&#x27;s own organization." in response.content.decode()
    assert not Bundle.all_orgs.filter(name="Mixed pack").exists()


def test_a_course_is_in_a_bundle_once(org):
    bundle = Bundle.all_orgs.create(org=org, name="Once")
    course = CourseFactory(org=org)
    BundleCourse.all_orgs.create(bundle=bundle, course=course)
    with pytest.raises(Exception, match=r"bundlecourse_org_bundle_course|UNIQUE"):
        BundleCourse.all_orgs.create(bundle=bundle, course=course)

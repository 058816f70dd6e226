"""GET /api/learn/courses/{courseId}/activities (4.4)."""

import re
from datetime import UTC, datetime

import pytest

from learn.models import Activity
from learn.serializers import ActivitySerializer
from tests.helpers import assert_error, assert_foreign_looks_missing, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, EnrollmentFactory, ModuleFactory

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-7000-8000-000000000000"
ISO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def url(course_id) -> str:
    return f"/api/learn/courses/{course_id}/activities"


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content[:500]
    return [row["id"] for row in response.json()]


def test_lists_by_module_seq_then_activity_seq(api, enrolled, course):
    # Created out of order on purpose: the order comes from seq, not from creation.
    second = ModuleFactory(course=course, seq=2)
    first = ModuleFactory(course=course, seq=1)
    b2 = ActivityFactory(module=second, seq=2)
    a3 = ActivityFactory(module=first, seq=3)
    b1 = ActivityFactory(module=second, seq=1)
    a1 = ActivityFactory(module=first, seq=1)
    assert ids(api.get(url(course.id), token=enrolled.token)) == [
        str(a1.id),
        str(a3.id),
        str(b1.id),
        str(b2.id),
    ]


def test_each_activity_has_the_interface_fields_and_settings_as_stored(
    api, enrolled, course, module
):
    settings = {"completion": {"type": "media", "threshold": 0.9}, "duration": 600, "x": [None]}
    with_settings = ActivityFactory(module=module, seq=1, settings=settings, title="Intro video")
    ActivityFactory(module=module, seq=2, settings=None, title="")
    rows = api.get(url(course.id), token=enrolled.token).json()
    assert set(rows[0]) == set(
        [
            "orgId",
            "id",
            "moduleId",
            "courseId",
            "seq",
            "title",
            "settings",
            "createdAt",
            "updatedAt",
        ]
    )
    assert (rows[0]["title"], rows[1]["title"]) == ("Intro video", "")
    assert rows[0]["orgId"] == str(course.org_id)
    assert rows[0]["moduleId"] == str(module.id)
    assert rows[0]["courseId"] == str(course.id)
    assert (rows[0]["id"], rows[0]["seq"]) == (str(with_settings.id), 1)
    assert rows[0]["settings"] == settings
    assert rows[1]["settings"] is None
    assert ISO_Z.fullmatch(rows[0]["createdAt"]) and ISO_Z.fullmatch(rows[0]["updatedAt"])


def test_rows_read_as_the_activity_serializer_writes_them(api, enrolled, course, module):
    """The listing builds its rows from column values; they must read as the serializer's
    would, microseconds and nested settings included."""
    ActivityFactory(module=module, seq=1, settings={"completion": {"type": "view"}, "n": [1.5]})
    ActivityFactory(module=module, seq=2, settings=None)
    Activity.objects.for_org(course.org).filter(seq=2).update(
        created_at=datetime(2026, 1, 2, 3, 4, 5, 7, tzinfo=UTC)
    )
    expected = [
        dict(ActivitySerializer(activity).data)
        for activity in Activity.objects.for_org(course.org).order_by("seq")
    ]
    assert api.get(url(course.id), token=enrolled.token).json() == expected


def test_hides_unpublished_activities_and_activities_of_unpublished_modules(
    api, enrolled, course, module
):
    shown = ActivityFactory(module=module, seq=1)
    ActivityFactory(module=module, seq=2, published=False)
    hidden_module = ModuleFactory(course=course, seq=2, published=False)
    ActivityFactory(module=hidden_module, seq=1, published=True)
    assert ids(api.get(url(course.id), token=enrolled.token)) == [str(shown.id)]


def test_a_course_without_published_activities_is_an_empty_list(api, enrolled, course):
    assert ids(api.get(url(course.id), token=enrolled.token)) == []


def test_another_organizations_course_looks_missing(api, enrolled, other_org):
    foreign = CourseFactory(org=other_org)
    ActivityFactory(module=ModuleFactory(course=foreign))
    assert_foreign_looks_missing(api, "GET", url(foreign.id), url(MISSING), token=enrolled.token)


def test_a_learner_of_another_organization_gets_404_not_403(api, course, other_org):
    stranger = make_member(other_org)
    assert_error(api.get(url(course.id), token=stranger.token), 404, "not_found")


def test_an_unpublished_course_is_404_even_when_enrolled(api, enrolled, course):
    course.published = False
    course.save()
    assert_error(api.get(url(course.id), token=enrolled.token), 404, "not_found")


def test_a_malformed_course_id_is_404(api, enrolled):
    assert_error(api.get(url("not-a-uuid"), token=enrolled.token), 404, "not_found")


def test_a_member_not_enrolled_is_403_not_enrolled(api, org, course):
    outsider = make_member(org)
    assert_error(api.get(url(course.id), token=outsider.token), 403, "not_enrolled")


def test_enrollment_in_another_course_does_not_count(api, enrolled, org):
    other = CourseFactory(org=org)
    assert_error(api.get(url(other.id), token=enrolled.token), 403, "not_enrolled")


def test_without_a_token_is_401(api, course):
    assert_error(api.get(url(course.id)), 401, "unauthenticated")


def test_post_is_405(api, enrolled, course):
    assert_error(api.post(url(course.id), {}, token=enrolled.token), 405, "method_not_allowed")


@pytest.mark.parametrize("count", [2, 30])
def test_query_count_does_not_grow_with_the_activities(
    api, enrolled, course, count, django_assert_num_queries
):
    modules = [ModuleFactory(course=course, seq=s) for s in (1, 2, 3)]
    for n in range(count):
        ActivityFactory(module=modules[n % 3], seq=n + 1)
    # token, then the activities with the enrollment.
    with django_assert_num_queries(2):
        response = api.get(url(course.id), token=enrolled.token)
    assert len(ids(response)) == count


def test_a_course_listing_nothing_checks_access_in_a_second_query(
    api, enrolled, course, module, django_assert_num_queries
):
    ActivityFactory(module=module, seq=1, published=False)
    # token, the (no) activities, then the course and the enrollment.
    with django_assert_num_queries(3):
        assert ids(api.get(url(course.id), token=enrolled.token)) == []


# The access rules hold whether the course lists an activity (answered by the listing's own
# query) or none (answered by the course's access check).
@pytest.fixture(params=["listing an activity", "listing none"])
def listing(request, course):
    def give(target):
        if request.param == "listing an activity":
            ActivityFactory(module=ModuleFactory(course=target, seq=1), seq=1)
        return target

    return give


def test_access_not_enrolled_is_403(api, org, course, listing):
    assert_error(
        api.get(url(listing(course).id), token=make_member(org).token), 403, "not_enrolled"
    )


def test_access_another_members_enrollment_is_403(api, org, course, listing):
    EnrollmentFactory(course=listing(course), membership=make_member(org).membership)
    assert_error(api.get(url(course.id), token=make_member(org).token), 403, "not_enrolled")


def test_access_enrolled_in_another_course_is_403(api, enrolled, org, listing):
    other = listing(CourseFactory(org=org))
    assert_error(api.get(url(other.id), token=enrolled.token), 403, "not_enrolled")


def test_access_unpublished_course_is_404_even_when_enrolled(api, enrolled, course, listing):
    listing(course)
    course.published = False
    course.save()
    assert_error(api.get(url(course.id), token=enrolled.token), 404, "not_found")


def test_access_foreign_course_is_404_even_with_a_foreign_enrollment(
    api, enrolled, other_org, listing
):
    foreign = listing(CourseFactory(org=other_org))
    stranger = make_member(other_org)
    EnrollmentFactory(course=foreign, membership=stranger.membership)
    assert_error(api.get(url(foreign.id), token=enrolled.token), 404, "not_found")
    assert len(ids(api.get(url(foreign.id), token=stranger.token))) == int(
        Activity.objects.for_org(other_org).exists()
    )


def test_access_enrolled_lists(api, enrolled, course, listing):
    listing(course)
    expected = list(Activity.objects.for_org(course.org).values_list("id", flat=True))
    assert ids(api.get(url(course.id), token=enrolled.token)) == [str(i) for i in expected]


def test_schema_documents_the_operation(api):
    schema = api.get("/api/schema/", query={"format": "json"}).json()
    operation = schema["paths"]["/api/learn/courses/{courseId}/activities"]["get"]
    assert {"200", "401", "403", "404"} <= set(operation["responses"])
    content = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert content["type"] == "array"


def test_enrollment_of_another_member_does_not_count(api, org, course):
    EnrollmentFactory(course=course, membership=make_member(org).membership)
    assert_error(api.get(url(course.id), token=make_member(org).token), 403, "not_enrolled")

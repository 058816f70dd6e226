"""The admin: courses with ordered inlines, validated completion rules, read-only progress."""

import json

import pytest
from django.forms import BooleanField
from django.test import Client

from learn.models import Activity, Enrollment, Module, Progress
from tests.factories import UserFactory
from tests.helpers import ApiClient, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, ModuleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db) -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def form_data(response) -> dict:
    """The POST data of an admin change form as rendered (main form and inline formsets)."""
    data: dict = {}
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        forms.append(formset.management_form)
        forms.extend(formset.forms)
    for form in forms:
        for name, field in form.fields.items():
            value = form[name].value()
            key = form.add_prefix(name)
            if isinstance(field, BooleanField):
                if value:
                    data[key] = "on"
            elif value is not None:
                data[key] = value
    return data


def course_url(course) -> str:
    return f"/admin/learn/course/{course.pk}/change/"


def test_course_page_lists_modules_and_activities_in_order(staff, course):
    second, first = ModuleFactory(course=course, seq=2), ModuleFactory(course=course, seq=1)
    late = ActivityFactory(module=second, seq=1)
    early2 = ActivityFactory(module=first, seq=2)
    early1 = ActivityFactory(module=first, seq=1)
    response = staff.get(course_url(course))
    assert response.status_code == 200
    modules, activities = (i.formset for i in response.context["inline_admin_formsets"])
    assert [f.instance for f in modules.forms] == [first, second]
    assert [f.instance for f in activities.forms] == [early1, early2, late]


def test_a_bad_completion_rule_is_a_form_error_and_nothing_is_saved(staff, course, module):
    activity = ActivityFactory(module=module, seq=1, settings={"completion": {"type": "view"}})
    data = form_data(staff.get(course_url(course)))
    data["activities-0-settings"] = json.dumps({"completion": {"type": "magic"}})
    response = staff.post(course_url(course), data)
    assert response.status_code == 200
    assert "Unknown completion rule type" in response.content.decode()
    activity.refresh_from_db()
    assert activity.settings == {"completion": {"type": "view"}}


def test_a_valid_rule_is_saved_from_the_course_page(staff, course, module):
    activity = ActivityFactory(module=module, seq=1)
    data = form_data(staff.get(course_url(course)))
    rule = {"completion": {"type": "time", "minSeconds": 90}}
    data["activities-0-settings"] = json.dumps(rule)
    response = staff.post(course_url(course), data)
    assert response.status_code == 302, response.context and response.context["errors"]
    activity.refresh_from_db()
    assert activity.settings == rule


def test_two_modules_at_one_position_are_refused(staff, course):
    ModuleFactory(course=course, seq=1)
    ModuleFactory(course=course, seq=2)
    data = form_data(staff.get(course_url(course)))
    data["modules-1-seq"] = "1"
    response = staff.post(course_url(course), data)
    assert response.status_code == 200
    assert "Another row already has this position" in response.content.decode()


def test_modules_swap_positions_in_one_save(staff, course):
    a, b = ModuleFactory(course=course, seq=1), ModuleFactory(course=course, seq=2)
    data = form_data(staff.get(course_url(course)))
    data["modules-0-seq"], data["modules-1-seq"] = "2", "1"
    assert staff.post(course_url(course), data).status_code == 302
    assert list(Module.all_orgs.filter(course=course).order_by("seq")) == [b, a]


def test_adding_a_course_with_a_module_in_one_go(staff, org):
    data = {
        "org": str(org.pk),
        "title": "New course",
        "published": "on",
        "modules-TOTAL_FORMS": "1",
        "modules-INITIAL_FORMS": "0",
        "modules-0-seq": "1",
        "modules-0-title": "Intro",
        "activities-TOTAL_FORMS": "0",
        "activities-INITIAL_FORMS": "0",
    }
    response = staff.post("/admin/learn/course/add/", data)
    assert response.status_code == 302, response.context and response.context["errors"]
    module = Module.all_orgs.get(title="Intro")
    assert module.org_id == org.pk and module.course.title == "New course"


def test_activity_page_validates_the_rule_and_takes_the_module_course(staff, course, module):
    url = "/admin/learn/activity/add/"
    bad = {"module": str(module.pk), "seq": "1", "settings": '{"completion": {"type": "time"}}'}
    response = staff.post(url, bad)
    assert response.status_code == 200 and "minSeconds" in response.content.decode()
    assert not Activity.all_orgs.exists()
    good = {**bad, "settings": '{"completion": {"type": "score", "passingScore": 0.8}}'}
    assert staff.post(url, good).status_code == 302
    activity = Activity.all_orgs.get()
    assert (activity.course_id, activity.org_id) == (course.pk, course.org_id)


def test_enrolling_a_member_of_another_organization_is_refused(staff, course, other_org):
    stranger = make_member(other_org)
    response = staff.post(
        "/admin/learn/enrollment/add/",
        {"course": str(course.pk), "membership": str(stranger.membership.pk)},
    )
    assert response.status_code == 200
    assert "must belong to the course" in response.content.decode()
    assert not Enrollment.all_orgs.exists()


def test_enrolling_twice_is_a_form_error(staff, course, enrolled):
    response = staff.post(
        "/admin/learn/enrollment/add/",
        {"course": str(course.pk), "membership": str(enrolled.membership.pk)},
    )
    assert response.status_code == 200
    assert "already enrolled" in response.content.decode()
    assert Enrollment.all_orgs.count() == 1


def test_progress_and_its_reports_are_read_only(staff, api: ApiClient, enrolled, module):
    activity = ActivityFactory(module=module, seq=1, settings={"completion": {"type": "reported"}})
    api.post(
        "/api/learn/progress",
        {"activity": str(activity.id), "reports": [{"type": "bookmark", "note": "kept-raw"}]},
        token=enrolled.token,
    )
    progress = Progress.all_orgs.get()
    page = staff.get(f"/admin/learn/progress/{progress.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "kept-raw" in html and 'name="_save"' not in html
    assert staff.get("/admin/learn/progress/add/").status_code == 403
    assert staff.post(f"/admin/learn/progress/{progress.pk}/delete/").status_code == 403
    assert staff.get("/admin/learn/progressreport/").status_code == 200


def test_staff_of_one_organization_see_only_its_courses(org, other_org, course):
    foreign = CourseFactory(org=other_org, title="Rival course")
    owner = make_member(org, "owner")
    owner.user.is_staff = True
    owner.user.save()
    client = Client()
    client.force_login(owner.user)
    listing = client.get("/admin/learn/course/").content.decode()
    assert course.title in listing and "Rival course" not in listing
    assert client.get(course_url(foreign)).status_code == 302  # "does not exist" redirect


@pytest.mark.parametrize(
    "model", ["course", "activity", "enrollment", "progress", "progressreport"]
)
def test_every_learn_admin_page_renders(staff, api: ApiClient, enrolled, module, model):
    activity = ActivityFactory(module=module, seq=1)
    api.post(
        "/api/learn/progress",
        {"activity": str(activity.id), "reports": [{"type": "complete"}]},
        token=enrolled.token,
    )
    listing = staff.get(f"/admin/learn/{model}/")
    assert listing.status_code == 200
    obj = listing.context["cl"].result_list[0]
    assert staff.get(f"/admin/learn/{model}/{obj.pk}/change/").status_code == 200

"""The admin: courses with ordered inlines, validated completion rules, read-only progress."""

from decimal import Decimal

import pytest
from django.forms import BooleanField
from django.test import Client

from learn.models import Activity, Enrollment, Module, Progress
from tests.factories import UserFactory
from tests.helpers import ApiClient, admin_client, make_member
from tests.learn.factories import ActivityFactory, CourseFactory, ModuleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db) -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def form_data(response) -> dict:
    """The POST data of an admin change form as rendered: the main form and its inline
    formsets, nested ones (a module's activities) included."""
    data: dict = {}
    forms = [response.context["adminform"].form]
    formsets = [inline.formset for inline in response.context["inline_admin_formsets"]]
    while formsets:
        formset = formsets.pop(0)
        forms.append(formset.management_form)
        for form in formsets_forms(formset):
            forms.append(form)
            formsets.extend(getattr(form, "nested_formsets", []))
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


def formsets_forms(formset) -> list:
    return list(formset.forms)


def course_url(course) -> str:
    return f"/admin/learn/course/{course.pk}/change/"


def activities_prefix(module_row: int = 0) -> str:
    return f"modules-{module_row}-activities"


def errors_of(response) -> list:
    return response.context and [response.context["errors"]]


def test_course_page_is_an_outline_of_modules_with_their_activities_in_order(staff, course):
    second, first = ModuleFactory(course=course, seq=2), ModuleFactory(course=course, seq=1)
    late = ActivityFactory(module=second, seq=1)
    early2 = ActivityFactory(module=first, seq=2)
    early1 = ActivityFactory(module=first, seq=1)
    response = staff.get(course_url(course))
    assert response.status_code == 200
    [modules] = (i.formset for i in response.context["inline_admin_formsets"])
    assert [f.instance for f in modules.forms] == [first, second]
    assert [[a.instance for a in f.nested_formsets[0].forms] for f in modules.forms] == [
        [early1, early2],
        [late],
    ]
    assert "Position" in response.content.decode()


def test_a_rule_is_chosen_and_filled_in_with_fields_on_the_course_page(staff, course, module):
    activity = ActivityFactory(module=module, seq=1, settings={"level": 2})
    data = form_data(staff.get(course_url(course)))
    row = f"{activities_prefix()}-0"
    assert data[f"{row}-rule_type"] == "view" and data[f"{row}-settings"] == '{\n  "level": 2\n}'
    data.update({f"{row}-rule_type": "score", f"{row}-passing_score": "70"})
    response = staff.post(course_url(course), data)
    assert response.status_code == 302, errors_of(response)
    activity.refresh_from_db()
    assert activity.settings == {"level": 2, "completion": {"type": "score", "passingScore": 0.7}}


def test_a_rule_without_its_value_is_an_error_next_to_the_missing_field(staff, course, module):
    activity = ActivityFactory(module=module, seq=1, settings={"completion": {"type": "view"}})
    data = form_data(staff.get(course_url(course)))
    data[f"{activities_prefix()}-0-rule_type"] = "time"
    response = staff.post(course_url(course), data)
    assert response.status_code == 200
    [modules] = (i.formset for i in response.context["inline_admin_formsets"])
    form = modules.forms[0].nested_formsets[0].forms[0]
    assert form.errors == {"min_seconds": ["Must be a number of seconds greater than 0."]}
    activity.refresh_from_db()
    assert activity.settings == {"completion": {"type": "view"}}


def test_other_settings_cannot_hold_the_rule_and_a_bad_percentage_is_refused(staff, course, module):
    ActivityFactory(module=module, seq=1)
    data = form_data(staff.get(course_url(course)))
    row = f"{activities_prefix()}-0"
    data.update(
        {
            f"{row}-rule_type": "media",
            f"{row}-threshold": "0",
            f"{row}-settings": '{"completion": {"type": "view"}}',
        }
    )
    response = staff.post(course_url(course), data)
    [modules] = (i.formset for i in response.context["inline_admin_formsets"])
    assert modules.forms[0].nested_formsets[0].forms[0].errors == {
        "threshold": ["Must be more than 0%."],
        "settings": ["Set completion with the fields above, not here."],
    }


def test_an_activity_without_a_rule_keeps_none_and_shows_no_null(staff, course, module):
    activity = ActivityFactory(module=module, seq=1, settings=None)
    page = staff.get(course_url(course))
    assert ">null</textarea>" not in page.content.decode()
    data = form_data(page)
    data[f"{activities_prefix()}-0-title"] = "Renamed"
    assert staff.post(course_url(course), data).status_code == 302
    activity.refresh_from_db()
    assert (activity.title, activity.settings) == ("Renamed", None)


def test_media_and_pages_rules_take_the_activitys_length(staff, course, module):
    media, pages = ActivityFactory(module=module, seq=1), ActivityFactory(module=module, seq=2)
    data = form_data(staff.get(course_url(course)))
    prefix = activities_prefix()
    data.update(
        {
            f"{prefix}-0-rule_type": "media",
            f"{prefix}-0-threshold": "90",
            f"{prefix}-0-duration": "600",
            f"{prefix}-1-rule_type": "pages",
            f"{prefix}-1-threshold": "100",
            f"{prefix}-1-pages": "12",
        }
    )
    response = staff.post(course_url(course), data)
    assert response.status_code == 302, errors_of(response)
    media.refresh_from_db()
    pages.refresh_from_db()
    assert media.settings == {"duration": 600, "completion": {"type": "media", "threshold": 0.9}}
    assert pages.settings == {"pages": 12, "completion": {"type": "pages", "threshold": 1}}


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


def test_adding_a_course_with_modules_and_activities_in_one_go(staff, org):
    data = {
        "org": str(org.pk),
        "title": "New course",
        "published": "on",
        "modules-TOTAL_FORMS": "2",
        "modules-INITIAL_FORMS": "0",
        "modules-0-title": "Intro",
        "modules-1-title": "Practice",
    }
    activities = {0: [("Welcome", "view", {}), ("Quiz", "score", {"passing_score": "80"})]}
    activities[1] = [("Exercise", "time", {"min_seconds": "300"})]
    for module_row, rows in activities.items():
        prefix = activities_prefix(module_row)
        data.update({f"{prefix}-TOTAL_FORMS": str(len(rows)), f"{prefix}-INITIAL_FORMS": "0"})
        for index, (title, kind, values) in enumerate(rows):
            data.update({f"{prefix}-{index}-title": title, f"{prefix}-{index}-rule_type": kind})
            data.update({f"{prefix}-{index}-{key}": value for key, value in values.items()})
    response = staff.post("/admin/learn/course/add/", data)
    assert response.status_code == 302, errors_of(response)
    # Positions left blank follow the order shown.
    shown = [
        (a.module.seq, a.module.title, a.seq, a.title, a.settings, a.org_id, a.course.title)
        for a in Activity.all_orgs.select_related("module", "course").order_by("module__seq", "seq")
    ]
    assert shown == [
        (1, "Intro", 1, "Welcome", {"completion": {"type": "view"}}, org.pk, "New course"),
        (
            1,
            "Intro",
            2,
            "Quiz",
            {"completion": {"type": "score", "passingScore": 0.8}},
            org.pk,
            "New course",
        ),
        (
            2,
            "Practice",
            1,
            "Exercise",
            {"completion": {"type": "time", "minSeconds": 300}},
            org.pk,
            "New course",
        ),
    ]


def test_activity_page_validates_the_rule_and_takes_the_module_course(staff, course, module):
    url = "/admin/learn/activity/add/"
    bad = {"module": str(module.pk), "seq": "1", "rule_type": "time"}
    response = staff.post(url, bad)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "min_seconds": ["Must be a number of seconds greater than 0."]
    }
    assert not Activity.all_orgs.exists()
    good = {**bad, "rule_type": "score", "passing_score": "80", "min_seconds": "5"}
    assert staff.post(url, good).status_code == 302
    activity = Activity.all_orgs.get()
    assert (activity.course_id, activity.org_id) == (course.pk, course.org_id)
    # Only the chosen type's fields count: the minimum time typed before is not kept.
    assert activity.settings == {"completion": {"type": "score", "passingScore": 0.8}}
    page = staff.get(f"/admin/learn/activity/{activity.pk}/change/")
    assert page.context["adminform"].form.initial["passing_score"] == Decimal(80)


def test_every_rule_type_the_editor_offers_makes_a_valid_rule():
    """The editor presents the rules of learn.completion; the rules stay defined there."""
    from learn import completion
    from learn.admin_forms import RULE_FIELDS, RULES, ActivityForm

    assert set(RULE_FIELDS) == set(RULES) == set(completion.RULE_TYPES)
    values = {"min_seconds": "90", "threshold": "50", "passing_score": "70"}
    values |= {"duration": "120", "pages": "10"}
    for kind, names in RULE_FIELDS.items():
        form = ActivityForm(
            data={"seq": "1", "rule_type": kind, **{name: values[name] for name in names}}
        )
        form.is_valid()
        settings = form.cleaned_data["settings"]
        assert completion.read_settings(settings)[1] == [], (kind, settings)
        assert settings["completion"]["type"] == kind


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


def test_deleting_a_module_on_the_course_page_deletes_its_activities(staff, course, module):
    kept = ModuleFactory(course=course, seq=2)
    ActivityFactory(module=module, seq=1)
    survivor = ActivityFactory(module=kept, seq=1)
    data = form_data(staff.get(course_url(course)))
    data["modules-0-DELETE"] = "on"
    data[f"{activities_prefix(1)}-0-title"] = "Renamed"
    response = staff.post(course_url(course), data)
    assert response.status_code == 302, errors_of(response)
    assert list(Module.all_orgs.filter(course=course)) == [kept]
    assert [(a.pk, a.title) for a in Activity.all_orgs.filter(course=course)] == [
        (survivor.pk, "Renamed")
    ]


def test_a_module_whose_activity_has_progress_is_not_deleted(
    staff, api: ApiClient, enrolled, course, module
):
    activity = ActivityFactory(module=module, seq=1)
    api.post(
        "/api/learn/progress",
        {"activity": str(activity.id), "reports": []},
        token=enrolled.token,
    )
    data = form_data(staff.get(course_url(course)))
    data["modules-0-DELETE"] = "on"
    response = staff.post(course_url(course), data)
    assert response.status_code == 200
    assert "would require deleting the following protected related objects" in (
        response.content.decode()
    )
    assert Activity.all_orgs.filter(pk=activity.pk).exists()


def test_saving_the_course_page_unchanged_writes_no_activity(staff, course, module):
    rules = [
        {"completion": {"type": "time", "minSeconds": 5}},
        {"completion": {"type": "media", "threshold": 0.9}, "duration": 90.5},
        {"completion": {"type": "pages", "threshold": 0.333}, "pages": 7, "level": [1]},
        None,
    ]
    for seq, settings in enumerate(rules, start=1):
        ActivityFactory(module=module, seq=seq, settings=settings)
    before = dict(Activity.all_orgs.values_list("id", "updated_at"))
    response = staff.post(course_url(course), form_data(staff.get(course_url(course))))
    assert response.status_code == 302, errors_of(response)
    assert dict(Activity.all_orgs.values_list("id", "updated_at")) == before


def test_the_enrol_members_form_refuses_what_it_cannot_enrol(course_with_staff):
    course, client = course_with_staff
    url = f"/admin/learn/course/{course.pk}/enrol/"
    for data, field, message in [
        ({"emails": " \n \n"}, "emails", "This field is required."),
        (
            {"emails": "\n".join(f"m{n}@x.example" for n in range(501))},
            "emails",
            "At most 500 addresses at a time.",
        ),
        (
            {"emails": "a@x.example", "due_at": "2020-01-01T10:00"},
            "due_at",
            "The due date must be in the future.",
        ),
    ]:
        response = client.post(url, data)
        assert response.status_code == 200
        assert response.context["form"].errors[field] == [message]
        assert response.context["outcome"] is None
    assert not Enrollment.objects.for_org(course.org_id).exists()


def test_the_enrol_members_form_keeps_due_dates_when_none_is_given(course_with_staff):
    course, client = course_with_staff
    member = make_member(course.org).membership
    url = f"/admin/learn/course/{course.pk}/enrol/"
    client.post(url, {"emails": member.user.email, "due_at": "2099-05-01T09:00"})
    response = client.post(url, {"emails": member.user.email.upper()})
    assert response.context["outcome"].already_enrolled == [member.user.email.upper()]
    enrolment = Enrollment.objects.for_org(course.org_id).get(membership=member)
    assert enrolment.due_at.isoformat() == "2099-05-01T09:00:00+00:00"


@pytest.fixture
def course_with_staff(org):
    course = CourseFactory(org=org)
    return course, admin_client(org)

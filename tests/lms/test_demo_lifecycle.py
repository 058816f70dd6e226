"""seed_demo stays repeatable across the lifecycle: a run after a learner completed the demo
course and the pending invite was accepted starts from the same data set again."""

import pytest

from learn.models import CourseCompletion
from organizations.models import Invite, Membership, User
from tests.helpers import ApiClient, assert_error
from tests.learn.test_demo import FINISHING, seed

pytestmark = pytest.mark.django_db


def course_progress(api, data) -> dict:
    course = data["courses"][0]
    response = api.get(
        f"/api/learn/courses/{course['id']}/progress", token=data["tokens"]["learner"]
    )
    assert response.status_code == 200
    return response.json()


def accept(api, token: str):
    return api.post(f"/api/organizations/invites/{token}/accept")


def test_the_demo_course_can_be_completed_and_a_new_run_resets_it():
    data = seed()["org"]
    api = ApiClient()
    course = data["courses"][0]
    assert sorted(course["rules"].values()) == sorted(course["published"])
    for rule, activity in course["rules"].items():
        body = {"activity": activity, "reports": FINISHING[rule]}
        api.post("/api/learn/progress", body, token=data["tokens"]["learner"])
    assert course_progress(api, data)["status"] == "completed"

    again = seed()["org"]
    assert not CourseCompletion.all_orgs.exists()
    body = course_progress(api, again)
    assert (body["status"], body["progress"], body["completedAt"]) == ("not-started", 0.0, None)


def test_the_pending_invite_accepts_once_per_run():
    first = seed()
    members = Membership.all_orgs.count()
    api = ApiClient()
    invites = first["org"]["invites"]
    accepted = accept(api, invites["pending"])
    assert accepted.status_code == 201
    assert accepted.json()["email"].startswith("invite.pending@")
    assert_error(accept(api, invites["pending"]), 410, "invite_unavailable")
    for state in ("expired", "accepted", "revoked"):
        assert_error(accept(api, invites[state]), 410, "invite_unavailable")

    second = seed()
    assert Membership.all_orgs.count() == members  # the invitee left the demo organization
    assert_error(api.get("/api/bundles", token=accepted.json()["token"]), 401, "unauthenticated")
    assert_error(accept(api, invites["pending"]), 404, "not_found")  # the old token
    fresh = second["org"]["invites"]["pending"]
    assert accept(api, fresh).status_code == 201
    assert User.objects.filter(email__startswith="invite.pending@").count() == 1
    accepted_demo = Invite.all_orgs.get(email__startswith="invite.accepted@demo")
    assert accepted_demo.accepted_at is not None


@pytest.mark.parametrize("key, other", [("org", "otherOrg"), ("otherOrg", "org")])
def test_the_existing_account_invite_answers_its_own_names_once_per_run(key, other):
    """CONTRACT 7.3: accepting an invite to an address that has an account answers the
    invite's names, not the account's, which stay as they were."""
    first = seed()
    api = ApiClient()
    learner = Membership.all_orgs.get(
        org_id=first[other]["id"], user__email__startswith="learner@"
    ).user
    users, members = User.objects.count(), Membership.all_orgs.count()
    accepted = accept(api, first[key]["invites"]["existingAccount"])
    assert accepted.status_code == 201, accepted.content
    body = accepted.json()
    assert (body["email"], body["orgId"]) == (learner.email, first[key]["id"])
    assert body["firstName"] != learner.first_name and body["lastName"] != learner.last_name
    invite = Invite.all_orgs.get(org_id=first[key]["id"], email=learner.email)
    assert (body["firstName"], body["lastName"]) == (invite.first_name, invite.last_name)
    learner.refresh_from_db()
    assert (learner.first_name, learner.last_name) == ("Leo", "Learner")
    assert User.objects.count() == users and Membership.all_orgs.count() == members + 1

    second = seed()
    assert Membership.all_orgs.count() == members  # the learner left the inviting organization
    assert_error(api.get("/api/bundles", token=body["token"]), 401, "unauthenticated")
    assert accept(api, second[key]["invites"]["existingAccount"]).status_code == 201


def admin_sign_in(person: dict):
    from django.test import Client

    client = Client()
    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": person["email"], "password": person["password"]},
    )
    return client, response


def test_the_demo_staff_and_superuser_sign_in_and_the_staff_see_one_organization():
    manifest = seed()
    for key, other in (("org", "otherOrg"), ("otherOrg", "org")):
        staff = manifest[key]["staff"]
        user = User.objects.get(email=staff["email"])
        assert user.is_staff and not user.is_superuser
        roles = list(Membership.all_orgs.filter(user=user).values_list("org_id", "role"))
        assert [(str(org), role) for org, role in roles] == [(manifest[key]["id"], "admin")]
        client, response = admin_sign_in(staff)
        assert response.status_code == 302
        page = client.get("/admin/learn/course/").content.decode()
        assert manifest[key]["courses"][0]["id"] in page
        assert manifest[other]["courses"][0]["id"] not in page
        assert manifest[other]["name"] not in page
    client, response = admin_sign_in(manifest["superuser"])
    assert response.status_code == 302
    page = client.get("/admin/learn/course/").content.decode()
    assert manifest["org"]["name"] in page and manifest["otherOrg"]["name"] in page


def test_every_run_gives_new_passwords_and_the_old_ones_stop_working():
    first = seed()
    second = seed()
    assert first["org"]["staff"]["password"] != second["org"]["staff"]["password"]
    assert admin_sign_in(first["org"]["staff"])[1].status_code == 200  # the form again
    assert admin_sign_in(second["org"]["staff"])[1].status_code == 302

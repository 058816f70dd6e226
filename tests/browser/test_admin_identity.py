"""Staff in a real browser: signing in, API tokens shown once, and tenancy in the admin."""

from __future__ import annotations

import re

from organizations.models import ApiToken, Membership, hash_token
from tests.factories import MembershipFactory, OrganizationFactory

RAW_TOKEN = re.compile(r"lms_[A-Za-z0-9_-]{43}")


def test_superuser_signs_in_through_the_login_form(admin_ui, superuser):
    admin_ui.sign_in(superuser.email, superuser.password)

    assert admin_ui.path == "/admin/"
    assert "Site administration" in admin_ui.main_text()
    for model in ("Organizations", "Memberships", "API tokens", "Users"):
        assert admin_ui.page.get_by_role("link", name=model, exact=True).count() == 1


def test_a_wrong_password_is_refused_with_a_readable_error(admin_ui, superuser):
    admin_ui.sign_in(superuser.email, "not the password")

    assert admin_ui.path.startswith("/admin/login/")
    assert "enter the correct e-mail address and password" in admin_ui.error_note()


def test_api_token_is_shown_once_at_creation_then_only_its_prefix(admin_as, superuser, live_api):
    member = MembershipFactory(
        org=OrganizationFactory(name="Acme Learning"), role=Membership.Role.INSTRUCTOR
    )
    ui = admin_as(superuser.user)
    ui.open_add("organizations", "apitoken")
    ui.fill({"membership": str(member), "name": "course sync"})
    ui.save()

    [message] = [text for text in ui.messages() if "shown only this once" in text]
    [raw] = RAW_TOKEN.findall(message)
    token = ApiToken.all_orgs.get(key_hash=hash_token(raw))
    assert (token.membership_id, token.org_id, token.name) == (
        member.id,
        member.org_id,
        "course sync",
    )
    # The token works at once, over HTTP, and a made-up one does not.
    assert live_api.get("/api/schema/", token=raw).status == 200
    assert live_api.get("/api/schema/", token=raw[:-4] + "AAAA").status == 401

    ui.open_changelist("organizations", "apitoken")
    assert raw not in ui.page.content()
    assert token.prefix in " ".join(ui.changelist_rows())

    ui.open_change(token)
    assert ui.readonly_value("prefix") == raw[:12]
    assert raw not in ui.page.content()
    assert raw[12:] not in ui.page.content()


def test_staff_owner_sees_only_their_organization(admin_as, make_staff):
    org_a = OrganizationFactory(name="Org A")
    org_b = OrganizationFactory(name="Org B")
    staff = make_staff(org_a, Membership.Role.OWNER, email="owner@a.example")
    mine = MembershipFactory(org=org_a, user__email="learner@a.example")
    theirs = MembershipFactory(org=org_b, user__email="learner@b.example")

    ui = admin_as(staff.user)
    ui.open_changelist("organizations", "membership")
    rows = " ".join(ui.changelist_rows())
    assert "learner@a.example" in rows and "owner@a.example" in rows
    assert "learner@b.example" not in rows and "Org B" not in rows
    assert ui.filter_choices("organization") == ["Org A"]

    ui.open_add("organizations", "membership")
    assert ui.select_options("org") == ["Org A"]

    ui.open_add("organizations", "apitoken")
    choices = ui.select_options("membership")
    assert str(mine) in choices and str(theirs) not in choices

    ui.open_changelist("organizations", "organization")
    assert ui.changelist_rows()[0].startswith("Org A") and len(ui.changelist_rows()) == 1

    # Another organization's record cannot be opened by its URL either.
    ui.open_change(theirs)
    assert ui.path == "/admin/"
    assert any(
        str(theirs.pk) in message and "Perhaps it was deleted" in message
        for message in ui.messages()
    )


def test_staff_owner_adds_a_member_of_one_organization_to_another(admin_as, make_staff):
    org_a, org_c = OrganizationFactory(name="Org A"), OrganizationFactory(name="Org C")
    staff = make_staff(org_a, Membership.Role.OWNER)
    MembershipFactory(org=org_c, user=staff.user, role=Membership.Role.ADMIN)
    colleague = MembershipFactory(org=org_a, user__email="colleague@a.example").user
    MembershipFactory(org=OrganizationFactory(name="Org B"), user__email="stranger@b.example")

    ui = admin_as(staff.user)
    ui.open_add("organizations", "membership")
    assert ui.select_options("org") == ["Org A", "Org C"]
    people = ui.select_options("user")
    assert "colleague@a.example" in people and "stranger@b.example" not in people
    ui.fill({"org": "Org C", "user": "colleague@a.example", "role": "Instructor"})
    ui.save_added()
    added = Membership.all_orgs.get(org=org_c, user=colleague)
    assert added.role == Membership.Role.INSTRUCTOR

    # The same person twice in one organization is a readable form error, not a crash.
    ui.open_add("organizations", "membership")
    ui.fill({"org": "Org C", "user": "colleague@a.example", "role": "Learner"})
    ui.save()
    assert ui.errors() == {"__all__": ["Membership with this Org and User already exists."]}
    assert Membership.all_orgs.filter(org=org_c, user=colleague).count() == 1


def test_superuser_picks_a_person_with_the_user_autocomplete(admin_as, superuser):
    org = OrganizationFactory(name="Org A")
    person = MembershipFactory(
        org=OrganizationFactory(name="Org B"), user__email="pat@b.example"
    ).user

    ui = admin_as(superuser.user)
    ui.open_add("organizations", "membership")
    assert ui.autocomplete_results("user", "nobody@") == []
    ui.fill({"org": "Org A", "role": "Admin"})
    ui.choose_autocomplete("user", "pat@b")
    ui.save()

    assert Membership.all_orgs.get(org=org, user=person).role == Membership.Role.ADMIN

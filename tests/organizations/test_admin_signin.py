"""Admin sign-in: repeated failures lock the address and e-mail out (django-axes), the
lockout is visible to staff, and a reset lets the person in again."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.test import Client

from organizations.models import Membership
from tests.factories import UserFactory
from tests.helpers import make_member

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-password-1"


@pytest.fixture
def staff(org):
    user = UserFactory(is_staff=True, email="staff@example.com", password=PASSWORD)
    make_member(org, Membership.Role.ADMIN, user=user)
    return user


def sign_in(client: Client, password: str, email: str = "staff@example.com"):
    return client.post("/admin/login/?next=/admin/", {"username": email, "password": password})


def test_thirty_wrong_passwords_then_the_right_one_is_still_locked_out(staff, settings):
    client = Client()
    for _ in range(30):
        assert sign_in(client, "wrong").status_code in (200, 429)
    locked = sign_in(client, PASSWORD)
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    assert AccessAttempt.objects.filter(username="staff@example.com").exists()


def test_a_few_wrong_passwords_do_not_lock_out(staff, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, "wrong").status_code == 200
    assert sign_in(client, PASSWORD).status_code == 302
    # A success resets the count.
    assert not AccessAttempt.objects.filter(
        username="staff@example.com", failures_since_start__gt=0
    ).exists()


def test_the_lockout_is_per_address_and_e_mail(staff, settings):
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(attacker, "wrong")
    assert sign_in(attacker, PASSWORD).status_code == 429
    elsewhere = Client(REMOTE_ADDR="198.51.100.2")
    assert sign_in(elsewhere, PASSWORD).status_code == 302


def test_staff_see_the_lockout_and_a_reset_lets_the_person_in(staff, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "wrong")
    superuser = Client()
    superuser.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = superuser.get("/admin/axes/accessattempt/").content.decode()
    assert "staff@example.com" in page
    call_command("axes_reset_username", "staff@example.com")
    assert sign_in(client, PASSWORD).status_code == 302

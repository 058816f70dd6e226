"""9.1 GET /api/organizations/members over real HTTP (the live server): who may list, the
rows, the order (lower-cased e-mail in code-point order, then the id), search, role and
paging, and a constant number of queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from organizations.models import Membership
from tests.browser.live_api import LiveApi
from tests.factories import MembershipFactory, UserFactory
from tests.helpers import ApiClient, assert_error, make_member

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/organizations/members"
Role = Membership.Role


@pytest.fixture
def http(live_server) -> LiveApi:
    return LiveApi(live_server.url)


def member(org, email: str, role: str = Role.LEARNER, **names) -> Membership:
    return MembershipFactory(org=org, role=role, user=UserFactory(email=email, **names))


def listed(http, token, **query) -> dict:
    response = http.get(URL, token=token, query=query)
    assert response.status == 200, response.body[:500]
    return response.json()


@pytest.mark.parametrize("staff", ["owner", "admin_member", "instructor"])
def test_staff_list_their_organizations_members(request, http, org, other_org, staff):
    caller = request.getfixturevalue(staff)
    ada = member(org, "ada@example.com", first_name="Ada", last_name="Lovelace")
    member(other_org, "aaron@rival.example")
    body = listed(http, caller.token)
    assert body["total"] == 2 and body["page"] == 1 and body["pageSize"] == 20
    row = next(row for row in body["rows"] if row["id"] == str(ada.id))
    assert row == {
        "id": str(ada.id),
        "email": "ada@example.com",
        "firstName": "Ada",
        "lastName": "Lovelace",
        "role": "learner",
        "createdAt": ada.created_at.isoformat().replace("+00:00", "Z"),
    }


def test_a_learner_may_not_list(http, learner):
    assert_error(http.get(URL, token=learner.token), 403, "permission_denied")
    assert_error(http.get(URL, token=learner.token, query={"role": "x"}), 403, "permission_denied")
    assert_error(http.get(URL), 401, "unauthenticated")


def test_rows_are_sorted_by_the_lower_cased_email_in_code_point_order_then_id(http, org, owner):
    # Code points: "." < "@" < "Z".lower() ... "_" < "a" < "z" < "é"; locales sort otherwise.
    emails = ["ab@x.example", "a_b@x.example", "A.B@x.example", "éa@x.example", "Zed@x.example"]
    made = {email: member(org, email) for email in emails}
    twins = [member(org, "Twin@x.example"), member(org, "twin@x.example")]
    rows = listed(http, owner.token, pageSize=100)["rows"]
    expected = sorted(
        [*((e.lower(), str(m.id)) for e, m in made.items()), (owner.user.email, "")]
        + [("twin@x.example", str(t.id)) for t in twins]
    )
    assert [row["email"].lower() for row in rows] == [key for key, _ in expected]
    twin_ids = [row["id"] for row in rows if row["email"].lower() == "twin@x.example"]
    assert twin_ids == sorted(str(t.id) for t in twins)


def test_search_finds_a_substring_of_the_email_or_names_in_any_case(http, org, owner):
    grace = member(org, "grace@navy.example", first_name="Grace", last_name="Hopper")
    alan = member(org, "alan@turing.example", first_name="Alan", last_name="Turing")
    member(org, "other@x.example", first_name="Pat", last_name="Smith")

    def found(search):
        return {row["id"] for row in listed(http, owner.token, search=search)["rows"]}

    assert found("NAVY") == {str(grace.id)}
    assert found("hopp") == {str(grace.id)}
    assert found("aLaN") == {str(alan.id)}
    assert found("%") == set() and found("_") == set()
    assert found(" ") == set() and len(found("")) == 4


def test_role_filters_and_paging(http, org, owner):
    for number in range(5):
        member(org, f"learner{number}@x.example")
    member(org, "teacher@x.example", role=Role.INSTRUCTOR)
    body = listed(http, owner.token, role="learner", pageSize=2, page=2)
    assert body["total"] == 5 and body["page"] == 2 and body["pageSize"] == 2
    assert [row["email"] for row in body["rows"]] == ["learner2@x.example", "learner3@x.example"]
    assert [row["role"] for row in listed(http, owner.token, role="instructor")["rows"]] == [
        "instructor"
    ]
    past = listed(http, owner.token, role="learner", page=9)
    assert past["rows"] == [] and past["total"] == 5


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ({"role": "superuser"}, {"role"}),
        ({"role": "Owner"}, {"role"}),
        ({"role": ""}, {"role"}),  # a value, and none of the four (CONTRACT 9.1)
        ({"search": "x" * 201}, {"search"}),
        ({"page": "0"}, {"page"}),
        ({"pageSize": "101"}, {"pageSize"}),
        ({"page": "x", "role": "nobody", "search": "y" * 300}, {"page", "role", "search"}),
    ],
)
def test_every_bad_parameter_is_named_in_one_400(http, owner, query, fields):
    body = assert_error(http.get(URL, token=owner.token, query=query), 400, "validation_error")
    assert set(body["details"]) == fields


def test_a_search_of_200_characters_is_taken(http, owner):
    assert listed(http, owner.token, search="x" * 200)["rows"] == []


def test_a_page_costs_at_most_four_queries_for_few_and_many_members(org, owner):
    # The token's lookup, the count, the page's ids and their rows (page 1 of fewer rows
    # than a page needs no count), whatever the number of members, the page and the filters.
    api = ApiClient()
    for count in (3, 60):
        while Membership.objects.for_org(org).count() < count:
            make_member(org)
        for query in ({}, {"page": "2", "pageSize": "1", "search": "example", "role": "learner"}):
            with CaptureQueriesContext(connection) as captured:
                response = api.get(URL, token=owner.token, query=query)
            assert response.status_code == 200 and response.json()["rows"]
            assert len(captured) <= 4, [query["sql"] for query in captured]


def test_a_users_new_address_and_names_are_listed_and_searched(http, org, owner):
    ada = member(org, "ada@x.example", first_name="Ada", last_name="Byron")
    zed = member(org, "zed@x.example")
    user = ada.user
    user.email, user.last_name = "Zz@X.example", "Lovelace"
    user.save()
    rows = listed(http, owner.token, search="@x.example")["rows"]
    assert [row["id"] for row in rows] == [str(zed.id), str(ada.id)]  # "zed@" < "zz@"
    assert [row["id"] for row in listed(http, owner.token, search="LOVE")["rows"]] == [str(ada.id)]
    assert listed(http, owner.token, search="byron")["rows"] == []
    # A term never matches across two fields.
    assert listed(http, owner.token, search="ada\x1flovelace")["rows"] == []
    assert listed(http, owner.token, search="com\x1fada")["rows"] == []

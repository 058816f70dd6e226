"""Body fields take JSON values as the schema types them (what the fuzzer found DRF lets by).

Through HTTP: a body id of the wrong JSON type is a 400 validation_error naming the field.
"""

import uuid

import pytest
from rest_framework import serializers

from lms.fields import JsonIntegerField, StrictCharField, StrictUUIDField
from tests.helpers import assert_error

ID = "0190b3c2-5d1e-7c3a-9f00-123456789abc"


class Body(serializers.Serializer):
    memberId = StrictUUIDField(required=False)
    name = StrictCharField(required=False)
    pageSize = JsonIntegerField(required=False, min_value=1, max_value=100)


def errors_of(data: dict) -> dict:
    body = Body(data=data)
    body.is_valid()
    return body.errors


@pytest.mark.parametrize("value", [ID, ID.upper()])
def test_a_hyphenated_uuid_string_is_an_id(value):
    body = Body(data={"memberId": value})
    assert body.is_valid(), body.errors
    assert body.validated_data["memberId"] == uuid.UUID(ID)


@pytest.mark.parametrize(
    "value",
    [0, 1, True, False, 1.5, None, [], {}, ID.replace("-", ""), "{" + ID + "}", f"urn:uuid:{ID}"],
)
def test_anything_else_is_not_an_id(value):
    assert "memberId" in errors_of({"memberId": value})


@pytest.mark.parametrize("value", [0, 1.5, True, [], {}])
def test_a_string_field_takes_only_strings(value):
    assert "name" in errors_of({"name": value})


@pytest.mark.parametrize("value", ["5", 5.0, True, "five", [5]])
def test_an_integer_field_takes_only_integers(value):
    assert "pageSize" in errors_of({"pageSize": value})


def test_an_integer_keeps_its_range():
    assert Body(data={"pageSize": 100}).is_valid()
    assert "pageSize" in errors_of({"pageSize": 101})


@pytest.mark.urls("tests.schema.fuzz_probe_urls")
@pytest.mark.django_db
def test_a_number_for_a_body_id_is_a_validation_error(api, owner):
    response = api.post(
        "/probe/echo", {"pageSize": 1, "tags": [], "memberId": 1}, token=owner.token
    )
    body = assert_error(response, 400, "validation_error")
    assert list(body["details"]) == ["memberId"]

"""A wire shape declared once by its serializer (``lms.web.shapes``): the bodies its
generated builders make are the serializer's own, read as rows or held as Python values, and
a field it cannot build fails when the shape is made, naming what to do."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers

from bundles.models import Bundle
from bundles.serializers import BundleSerializer
from lms.serializers import OrgScopedSerializer
from lms.web.shapes import Shape
from tests.bundles.factories import add_bundles

pytestmark = pytest.mark.django_db


class _Described(OrgScopedSerializer):
    """A shape of every kind of field a Shape builds: ids, times, text, JSON-free numbers."""

    class Meta:
        model = Bundle
        fields = ["orgId", "id", "name", "description", "createdAt", "updatedAt"]


def test_bodies_of_rows_read_through_the_columns_are_the_serializers(org):
    add_bundles(org, ["Alpha", "Beta", "Ünïcode"])
    shape = Shape(_Described)
    rows = Bundle.objects.for_org(org).order_by("id").values_list(*shape.columns)
    bundles = Bundle.objects.for_org(org).order_by("id")
    assert shape.bodies(rows) == _Described(bundles, many=True).data
    assert len(shape.bodies(rows)) == 3


def test_bodies_of_python_values_are_the_serializers(org):
    add_bundles(org, ["A", "B"])
    shape = Shape(_Described)
    rows = Bundle.objects.for_org(org).order_by("id").values_list(*shape.sources)
    records = [shape.record._make(row) for row in rows]
    bundles = Bundle.objects.for_org(org).order_by("id")
    assert shape.bodies_of(records) == _Described(bundles, many=True).data


def test_the_shape_reads_what_the_serializer_declares_and_nothing_else():
    shape = Shape(BundleSerializer)
    assert shape.names == tuple(BundleSerializer().fields)
    assert shape.sources == ("org_id", "id", "name", "created_at", "updated_at")


def test_a_field_it_cannot_build_fails_naming_the_serializer_the_field_and_the_fix():
    class Computed(OrgScopedSerializer):
        shout = serializers.SerializerMethodField()

        class Meta:
            model = Bundle
            fields = ["id", "shout"]

        def get_shout(self, bundle):
            return bundle.name.upper()

    with pytest.raises(ImproperlyConfigured) as raised:
        Shape(Computed)
    message = str(raised.value)
    assert "Computed.shout" in message and "through the serializer" in message


def test_a_source_that_is_no_column_fails_naming_it():
    class Related(OrgScopedSerializer):
        orgName = serializers.CharField(source="org.name")

        class Meta:
            model = Bundle
            fields = ["id", "orgName"]

    with pytest.raises(ImproperlyConfigured, match=r"org\.name.*not columns of bundles.Bundle"):
        Shape(Related)


def test_objects_with_nested_lists_are_built_as_the_serializer_builds_them():
    class Item(serializers.Serializer):
        id = serializers.UUIDField()
        score = serializers.FloatField()

    class Holder(serializers.Serializer):
        title = serializers.CharField()
        items = Item(many=True)

    class Obj:
        def __init__(self, **values):
            self.__dict__.update(values)

    holder = Obj(
        title="t",
        items=[Obj(id="0190a4b6-0000-7000-8000-000000000001", score=0.5), Obj(id="x", score=1.0)],
    )
    assert Shape(Holder).body(holder) == {
        "title": "t",
        "items": [
            {"id": "0190a4b6-0000-7000-8000-000000000001", "score": 0.5},
            {"id": "x", "score": 1.0},
        ],
    }

"""Test-only routes that exercise the cross-cutting machinery on a tenant-owned model."""

from django.http import JsonResponse
from django.urls import include, path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from lms.tenancy import OrgScopedViewMixin, get_or_404
from organizations.models import Membership
from organizations.permissions import HasRole


class MemberView(OrgScopedViewMixin, APIView):
    model = Membership

    def get(self, request, member_id):
        membership = get_or_404(self.scoped(), id=member_id)
        return Response({"id": str(membership.id), "role": membership.role})


class EchoInput(serializers.Serializer):
    pageSize = serializers.IntegerField(min_value=1, max_value=100)
    memberId = serializers.UUIDField(required=False)


class EchoView(APIView):
    @extend_schema(request=EchoInput, responses={201: EchoInput})
    def post(self, request):
        data = EchoInput(data=request.data)
        data.is_valid(raise_exception=True)
        return Response({"pageSize": data.validated_data["pageSize"]}, status=201)


class OwnersOnlyView(APIView):
    permission_classes = [HasRole.of("owner")]

    def get(self, request):
        return Response({"ok": True})


class BoomView(APIView):
    def get(self, request):
        raise RuntimeError("boom: a secret detail")


class TwoPerMinute(SimpleRateThrottle):
    rate = "2/min"

    def get_cache_key(self, request, view):
        return f"probe-throttle-{self.get_ident(request)}"


class ThrottledView(APIView):
    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes = [TwoPerMinute]

    def get(self, request):
        return Response({"ok": True})


def plain_boom(request):
    raise RuntimeError("plain django view failure")


def plain_ok(request):
    return JsonResponse({"ok": True})


urlpatterns = [
    path("probe/members/<uuid:member_id>", MemberView.as_view()),
    path("probe/echo", EchoView.as_view()),
    path("probe/owners-only", OwnersOnlyView.as_view()),
    path("probe/boom", BoomView.as_view()),
    path("probe/throttled", ThrottledView.as_view()),
    path("probe/plain-boom", plain_boom),
    path("probe/plain-ok", plain_ok),
    path("admin/probe-boom", plain_boom),  # a failing page under the admin's prefix
    path("", include("lms.urls")),
]

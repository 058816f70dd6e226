"""Routes that put the shared machinery under the schema fuzzer before (and besides) the real
operations: bearer auth and roles, a tenant-scoped lookup by UUID, body validation, a public
throttled lookup with an extra documented status, and one view that crashes on purpose so
the harness is seen to catch a 5xx. Only this URLconf's routes are in its schema."""

from django.urls import path
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from lms.errors import Gone
from lms.fields import JsonIntegerField, StrictCharField, StrictUUIDField
from lms.tenancy import OrgScopedViewMixin, get_or_404
from organizations.models import Membership
from organizations.permissions import IsOrgAdmin


class MemberOut(serializers.Serializer):
    id = serializers.UUIDField()
    role = serializers.ChoiceField(choices=Membership.Role.choices)


class MemberView(OrgScopedViewMixin, APIView):
    model = Membership
    permission_classes = [IsOrgAdmin]

    @extend_schema(responses={200: MemberOut})
    def get(self, request, member_id):
        membership = get_or_404(self.scoped(), id=member_id)
        return Response(MemberOut(membership).data)


class EchoIn(serializers.Serializer):
    pageSize = JsonIntegerField(min_value=1, max_value=100)
    memberId = StrictUUIDField(required=False)
    tags = serializers.ListField(child=StrictCharField(max_length=20), max_length=3)


class EchoOut(serializers.Serializer):
    pageSize = serializers.IntegerField()
    tags = serializers.ListField(child=serializers.CharField())


class EchoView(APIView):
    @extend_schema(request=EchoIn, responses={201: EchoOut})
    def post(self, request):
        data = EchoIn(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(EchoOut(data.validated_data).data, status=201)


class LookupThrottle(SimpleRateThrottle):
    rate = "30/min"

    def get_cache_key(self, request, view):
        return f"fuzz-probe-lookup-{self.get_ident(request)}"


class LookupOut(serializers.Serializer):
    email = serializers.EmailField()


class PublicLookupView(APIView):
    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes = [LookupThrottle]
    error_statuses = ("410",)

    @extend_schema(responses={200: LookupOut})
    def get(self, request, token):
        if token == "expired":
            raise Gone("That link has expired.")
        return Response({"email": "someone@example.com"})


class BoomView(APIView):
    @extend_schema(responses={200: LookupOut})
    def get(self, request):
        raise RuntimeError("boom: a secret detail")


urlpatterns = [
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("probe/members/<uuid:member_id>", MemberView.as_view()),
    path("probe/echo", EchoView.as_view()),
    path("probe/lookup/<str:token>", PublicLookupView.as_view()),
    path("probe/boom", BoomView.as_view()),
]

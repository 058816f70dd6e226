"""The textbook baseline: each measured operation written the way the Django REST framework
documentation teaches it, on the same models and with the same response bodies, for the
load bench and the instruction counts only (bench/urls.py; never the production URLconf).

- a bearer-token lookup with ``select_related`` on every request (no per-process memory);
- generic views: ``ListAPIView`` + ``PageNumberPagination`` + ``SearchFilter`` /
  ``OrderingFilter``, ``RetrieveAPIView``, an ``APIView`` with ``get_object_or_404``;
- ``ModelSerializer`` output (the service's own serializers, most of which are already
  ``ModelSerializer``s);
- DRF's ``SimpleRateThrottle`` on the shared cache for the invite lookup;
- the two link writes and progress in a transaction, as a tutorial would write them.

Served by bench/textbook_settings.py: Django's default middleware and persistent
connections (``CONN_MAX_AGE``), no pool, no caching.
"""

from __future__ import annotations

import os

from django.core.cache import caches
from django.db import transaction
from django.db.models import Max
from django.shortcuts import get_object_or_404
from django.utils import timezone
from rest_framework import filters, generics, serializers
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, NotFound, PermissionDenied
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from automations.models import Automation
from automations.serializers import AutomationSerializer
from bundles.models import Bundle
from bundles.serializers import BundleSerializer
from downloads.models import Asset, Download, DownloadAsset
from downloads.serializers import DownloadAssetSerializer
from learn.models import Activity, Course, Enrollment
from learn.serializers import ActivitySerializer, ProgressInputSerializer
from learn.services import record_progress
from organizations.models import ApiToken, Invite, hash_token
from organizations.serializers import InviteSerializer


class TokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        header = get_authorization_header(request).split()
        if len(header) != 2 or header[0].lower() != b"bearer":
            return None
        try:
            token = ApiToken.all_orgs.select_related("membership__org", "membership__user").get(
                key_hash=hash_token(header[1].decode()), revoked_at=None
            )
        except ApiToken.DoesNotExist:
            raise AuthenticationFailed("Invalid token.") from None
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise AuthenticationFailed("Token expired.")
        if not token.membership.user.is_active:
            raise AuthenticationFailed("User inactive.")
        return token.membership.user, token.membership

    def authenticate_header(self, request):
        return "Bearer"


class TextbookView(APIView):
    authentication_classes = [TokenAuthentication]
    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]

    @property
    def org(self):
        return self.request.auth.org


class IsStaff(IsAuthenticated):
    def has_permission(self, request, view):
        return super().has_permission(request, view) and request.auth.role in {
            "owner",
            "admin",
            "instructor",
        }


class IsAdmin(IsAuthenticated):
    def has_permission(self, request, view):
        return super().has_permission(request, view) and request.auth.role in {"owner", "admin"}


# --- reads -----------------------------------------------------------------------------------


class BundlePagination(PageNumberPagination):
    page_size = 20
    page_size_query_param = "pageSize"
    max_page_size = 100


class BundleOrdering(filters.OrderingFilter):
    ordering_param = "sort"


class BundleList(TextbookView, generics.ListAPIView):
    serializer_class = BundleSerializer
    pagination_class = BundlePagination
    filter_backends = [filters.SearchFilter, BundleOrdering]
    search_fields = ["name"]
    ordering_fields = ["name", "created_at", "updated_at"]
    ordering = ["-created_at"]

    def get_queryset(self):
        return Bundle.objects.for_org(self.org)


class ActivityList(TextbookView, generics.ListAPIView):
    serializer_class = ActivitySerializer

    def get_queryset(self):
        course = get_object_or_404(
            Course.objects.for_org(self.org), pk=self.kwargs["courseId"], published=True
        )
        if (
            not Enrollment.objects.for_org(self.org)
            .filter(membership=self.request.auth, course=course)
            .exists()
        ):
            raise PermissionDenied("Not enrolled.")
        return (
            Activity.objects.for_org(self.org)
            .filter(course=course, published=True, module__published=True)
            .order_by("module__seq", "seq")
        )


class AutomationDetail(TextbookView, generics.RetrieveAPIView):
    serializer_class = AutomationSerializer
    permission_classes = [IsAdmin]
    lookup_field = "pk"
    lookup_url_kwarg = "id"

    def get_queryset(self):
        return Automation.objects.for_org(self.org)


class InviteThrottle(SimpleRateThrottle):
    cache = caches["shared"]
    scope = "invite_lookup"
    rate = os.environ.get("LMS_INVITE_LOOKUP_RATE", "60/min")

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class InviteDetail(TextbookView, generics.RetrieveAPIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [InviteThrottle]
    serializer_class = InviteSerializer

    def get_object(self):
        invite = get_object_or_404(
            Invite.all_orgs, token_hash=hash_token(self.kwargs["token"]), state="pending"
        )
        if invite.expires_at <= timezone.now():
            raise NotFound("Expired.")
        return invite


# --- writes ----------------------------------------------------------------------------------


class LinkInput(serializers.Serializer):
    assetId = serializers.UUIDField()


def _links(download):
    return DownloadAsset.objects.for_org(download.org_id).filter(download=download).order_by("seq")


class DownloadAssets(TextbookView):
    permission_classes = [IsStaff]

    @transaction.atomic
    def post(self, request, downloadId):
        data = LinkInput(data=request.data)
        data.is_valid(raise_exception=True)
        download = get_object_or_404(
            Download.objects.for_org(self.org).select_for_update(), pk=downloadId
        )
        asset_id = data.validated_data["assetId"]
        asset = get_object_or_404(Asset.objects.for_org(self.org), pk=asset_id)
        created = False
        if not _links(download).filter(asset=asset).exists():
            last = _links(download).aggregate(last=Max("seq"))["last"] or 0
            DownloadAsset.objects.create(
                org=self.org, download=download, asset=asset, seq=last + 1, display_name=asset.name
            )
            created = True
        body = DownloadAssetSerializer(_links(download), many=True).data
        return Response(body, status=201 if created else 200)


class DownloadAssetDetail(TextbookView):
    permission_classes = [IsStaff]

    @transaction.atomic
    def delete(self, request, downloadId, assetId):
        download = get_object_or_404(
            Download.objects.for_org(self.org).select_for_update(), pk=downloadId
        )
        link = get_object_or_404(_links(download), asset_id=assetId)
        link.delete()
        remaining = list(_links(download))
        for seq, other in enumerate(remaining, start=1):
            if other.seq != seq:
                other.seq = seq
                other.save(update_fields=["seq"])
        return Response(DownloadAssetSerializer(remaining, many=True).data)


class Progress(TextbookView):
    @transaction.atomic
    def post(self, request):
        data = ProgressInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decision = record_progress(
            org=self.org,
            membership=request.auth,
            activity_id=data.validated_data["activity"],
            reports=data.validated_data["reports"],
            request_id="",
        )
        return Response({"status": decision.status, "progress": decision.progress})

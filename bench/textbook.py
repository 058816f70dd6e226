"""The textbook baseline: each measured operation written the way the Django REST framework
documentation teaches it, on the same models and with the same response bodies, for the
load bench and the instruction counts only (bench/urls.py; never the production URLconf).

- a bearer-token lookup with ``select_related`` on every request (no per-process memory);
- generic views: ``ListAPIView`` + ``PageNumberPagination`` + ``SearchFilter`` /
  ``OrderingFilter``, ``RetrieveAPIView``, an ``APIView`` with ``get_object_or_404``;
- nested ``ModelSerializer``s over ``prefetch_related`` and ``SerializerMethodField``s for
  the caller's standing (the course outline), annotations with subqueries for counts (the
  caller's courses);
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
from django.db.models import Count, Exists, Max, OuterRef, Prefetch, Subquery
from django.db.models.functions import Coalesce
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
from learn import completion
from learn.models import Activity, Course, CourseCompletion, Enrollment, Module
from learn.models import Progress as ProgressRow
from learn.selectors import course_status, fraction_done
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


class EnrolledCourseOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="course_id")
    orgId = serializers.UUIDField(source="org_id")
    title = serializers.CharField(source="course.title")
    enrolledAt = serializers.DateTimeField(source="created_at")
    status = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    completedAt = serializers.DateTimeField(source="course_completed_at")
    activityCount = serializers.IntegerField(source="activity_count")

    class Meta:
        model = Enrollment
        fields = [
            "id",
            "orgId",
            "title",
            "enrolledAt",
            "status",
            "progress",
            "completedAt",
            "activityCount",
        ]

    def get_status(self, enrollment) -> str:
        return course_status(enrollment.course_completed_at, enrollment.any_started)

    def get_progress(self, enrollment) -> float:
        return fraction_done(enrollment.done_count, enrollment.activity_count)


def _count(queryset):
    return Coalesce(
        Subquery(queryset.order_by().values("course_id").annotate(n=Count("id")).values("n")), 0
    )


class MyCourses(TextbookView, generics.ListAPIView):
    serializer_class = EnrolledCourseOut
    pagination_class = BundlePagination

    def get_queryset(self):
        member = self.request.auth
        listed = Activity.objects.for_org(self.org).filter(
            course=OuterRef("course_id"), published=True, module__published=True
        )
        mine = ProgressRow.objects.for_org(self.org).filter(
            membership=member,
            activity__course=OuterRef("course_id"),
            activity__published=True,
            activity__module__published=True,
        )
        completed_at = CourseCompletion.objects.for_org(self.org).filter(
            membership=member, course=OuterRef("course_id")
        )
        return (
            Enrollment.objects.for_org(self.org)
            .filter(membership=member, course__published=True)
            .select_related("course")
            .annotate(
                activity_count=_count(listed),
                done_count=Coalesce(
                    Subquery(
                        mine.filter(status=completion.COMPLETED)
                        .order_by()
                        .values("membership_id")
                        .annotate(n=Count("id"))
                        .values("n")
                    ),
                    0,
                ),
                any_started=Exists(mine),
                course_completed_at=Subquery(completed_at.values("completed_at")[:1]),
            )
            .order_by("-created_at", "-course_id")
        )


class OutlineActivityOut(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    remaining = serializers.SerializerMethodField()

    class Meta:
        model = Activity
        fields = ["id", "seq", "title", "settings", "status", "progress", "remaining"]

    def _mine(self, activity):
        return self.context["progress"].get(activity.id)

    def get_status(self, activity) -> str:
        mine = self._mine(activity)
        return mine.status if mine else completion.NOT_STARTED

    def get_progress(self, activity) -> float:
        mine = self._mine(activity)
        return mine.progress if mine else 0.0

    def get_remaining(self, activity):
        mine = self._mine(activity)
        return completion.remaining(
            activity.completion_settings,
            mine.state if mine else None,
            mine.status if mine else completion.NOT_STARTED,
        )


class OutlineModuleOut(serializers.ModelSerializer):
    activities = OutlineActivityOut(many=True, source="listed_activities")

    class Meta:
        model = Module
        fields = ["id", "seq", "title", "activities"]


class CourseOutlineOut(serializers.ModelSerializer):
    orgId = serializers.UUIDField(source="org_id")
    status = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    completedAt = serializers.SerializerMethodField()
    modules = OutlineModuleOut(many=True, source="listed_modules")

    class Meta:
        model = Course
        fields = ["id", "orgId", "title", "status", "progress", "completedAt", "modules"]

    def _listed(self, course):
        return [a for module in course.listed_modules for a in module.listed_activities]

    def get_status(self, course) -> str:
        started = any(a.id in self.context["progress"] for a in self._listed(course))
        return course_status(self.context["completion"], started)

    def get_progress(self, course) -> float:
        listed = self._listed(course)
        progress = self.context["progress"]
        done = sum(
            1 for a in listed if a.id in progress and progress[a.id].status == completion.COMPLETED
        )
        return fraction_done(done, len(listed))

    def get_completedAt(self, course):
        completed = self.context["completion"]
        return serializers.DateTimeField().to_representation(completed) if completed else None


class CourseOutline(TextbookView, generics.RetrieveAPIView):
    serializer_class = CourseOutlineOut

    def get_object(self):
        activities = Activity.objects.for_org(self.org).filter(published=True).order_by("seq", "id")
        modules = (
            Module.objects.for_org(self.org)
            .filter(published=True)
            .order_by("seq", "id")
            .prefetch_related(
                Prefetch("activities", queryset=activities, to_attr="listed_activities")
            )
        )
        course = get_object_or_404(
            Course.objects.for_org(self.org).prefetch_related(
                Prefetch("modules", queryset=modules, to_attr="listed_modules")
            ),
            pk=self.kwargs["courseId"],
            published=True,
        )
        if (
            not Enrollment.objects.for_org(self.org)
            .filter(membership=self.request.auth, course=course)
            .exists()
        ):
            raise PermissionDenied("Not enrolled.")
        return course

    def get_serializer_context(self):
        context = super().get_serializer_context()
        member = self.request.auth
        course_id = self.kwargs["courseId"]
        context["progress"] = {
            row.activity_id: row
            for row in ProgressRow.objects.for_org(self.org).filter(
                membership=member, activity__course_id=course_id
            )
        }
        stored = (
            CourseCompletion.objects.for_org(self.org)
            .filter(membership=member, course_id=course_id)
            .first()
        )
        context["completion"] = stored.completed_at if stored else None
        return context


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
        outcome = record_progress(
            org=self.org,
            membership=request.auth,
            activity_id=data.validated_data["activity"],
            reports=data.validated_data["reports"],
            request_id="",
        )
        return Response(
            {
                "status": outcome.status,
                "progress": outcome.progress,
                "remaining": outcome.remaining,
            }
        )

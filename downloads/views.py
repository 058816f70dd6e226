"""4.1 link an asset to a download, 4.2 unlink it, 8.4 read its links. Thin: parse, call the
service, answer the links it returns as ``DownloadAssetSerializer`` would (``LINK``)."""

from uuid import UUID

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.views import APIView

from downloads import services
from downloads.models import Download
from downloads.serializers import LINK, DownloadAssetSerializer, LinkAssetInputSerializer
from downloads.wire_reads import download_links
from lms.tenancy import OrgScopedViewMixin
from lms.web.renderers import rendered
from organizations.api import IsMember, IsStaffRole

LINKS = DownloadAssetSerializer(many=True)
DOWNLOAD_ID = OpenApiParameter(
    "downloadId", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The download's id."
)
ASSET_ID = OpenApiParameter(
    "assetId", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The linked asset's id."
)


class DownloadAssetsView(OrgScopedViewMixin, APIView):
    model = Download
    permission_classes = [IsStaffRole]

    def get_permissions(self):
        # Any member reads the links; staff roles change them.
        if self.request.method in ("GET", "HEAD"):
            return [IsMember()]
        return super().get_permissions()

    @property
    def error_statuses(self) -> tuple[str, ...]:
        method = getattr(getattr(self, "request", None), "method", "POST")
        return () if method in ("GET", "HEAD") else ("409",)

    @property
    def omit_error_statuses(self) -> tuple[str, ...]:
        # A read takes no body and no query parameter: nothing to validate.
        method = getattr(getattr(self, "request", None), "method", "POST")
        return ("400",) if method in ("GET", "HEAD") else ()

    @extend_schema(
        operation_id="list_download_assets",
        summary="A download's links",
        description="The download's links, ordered by seq: the list linking and unlinking "
        "answer. Roles: any member.",
        parameters=[DOWNLOAD_ID],
        responses={200: OpenApiResponse(LINKS, description="All links, ordered by seq.")},
        tags=["downloads"],
    )
    def get(self, request, downloadId: UUID):  # the URL carries the wire name
        links = download_links(org=self.org, download_id=downloadId)
        return rendered(request, LINK.bodies_of(links))

    @extend_schema(
        operation_id="link_download_asset",
        summary="Link an asset to a download",
        description="Appends the asset at the end (seq = n + 1). Re-linking a linked asset "
        "creates nothing and answers 200. Answers the download's whole list of links, "
        "ordered by seq. Roles: owner, admin, instructor.",
        parameters=[DOWNLOAD_ID],
        request=LinkAssetInputSerializer,
        responses={
            201: OpenApiResponse(LINKS, description="Linked: all links, ordered by seq."),
            200: OpenApiResponse(LINKS, description="Already linked: all links, unchanged."),
        },
        tags=["downloads"],
    )
    def post(self, request, downloadId: UUID):  # the URL carries the wire name
        data = LinkAssetInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        links, created = services.link_asset(
            org=self.org,
            download_id=downloadId,
            asset_id=data.validated_data["asset_id"],
            display_name=data.validated_data.get("display_name"),
        )
        return rendered(request, LINK.bodies_of(links), status=201 if created else 200)


class DownloadAssetView(OrgScopedViewMixin, APIView):
    model = Download
    permission_classes = [IsStaffRole]
    # No body is read, so neither validation_error nor malformed_request can happen.
    omit_error_statuses = ("400",)
    error_statuses = ("409",)

    @extend_schema(
        operation_id="unlink_download_asset",
        summary="Unlink an asset from a download",
        description="Removes the link; the asset stays in the media library. Answers the "
        "remaining links renumbered 1..n in their previous order. Roles: owner, admin, "
        "instructor.",
        parameters=[DOWNLOAD_ID, ASSET_ID],
        request=None,
        responses={200: OpenApiResponse(LINKS, description="The remaining links.")},
        tags=["downloads"],
    )
    def delete(self, request, downloadId: UUID, assetId: UUID):  # the URL carries the wire names
        links = services.unlink_asset(org=self.org, download_id=downloadId, asset_id=assetId)
        return rendered(request, LINK.bodies_of(links))

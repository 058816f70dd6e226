from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.views import APIView

from bundles.filters import LIST_PARAMETERS, read_list_query
from bundles.models import Bundle
from bundles.serializers import BUNDLE, BundleSerializer
from bundles.wire_reads import bundle_page
from lms.pagination import Page, envelope, paged, read_page
from lms.tenancy import OrgScopedViewMixin
from lms.web.renderers import rendered


class BundleListView(OrgScopedViewMixin, APIView):
    """GET /api/bundles (docs/api.md, "Bundles"): any member; the caller's organization's bundles.

    Every query parameter is validated before the database is touched, so that one 400 names
    all the bad ones (page, pageSize, search, sort). A page is read by
    ``bundles.wire_reads.bundle_page`` (page 1's SQL compiled once per process)."""

    model = Bundle

    def read_query(self) -> tuple[Page, str, tuple]:
        """The page, the search term ("" for none) and the sort keys, or one 400."""
        errors: dict[str, Any] = {}
        page: Page | None = None
        try:
            page = read_page(self.request)
        except ValidationError as exc:
            errors.update(exc.detail)  # type: ignore[arg-type]  # a serializer's: a dict
        cleaned, invalid = read_list_query(self.request.query_params)
        errors.update(invalid)
        if errors or page is None:
            raise ValidationError(errors)
        return page, cleaned.get("search") or "", tuple(cleaned["sort"])

    @extend_schema(
        operation_id="list_bundles",
        summary="List bundles",
        description="The caller's organization's bundles, a page at a time, optionally "
        "filtered by a name substring and sorted. Any member may call it. Unknown query "
        "parameters are ignored.",
        parameters=LIST_PARAMETERS,
        responses=paged(BundleSerializer),
    )
    def get(self, request, *args, **kwargs):
        page, search, sort = self.read_query()
        rows, total = bundle_page(self.org.id, page, sort, search)
        return rendered(request, envelope(BUNDLE.bodies(rows), total, page))

from django_filters import utils as filter_utils
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError

from bundles.filters import BundleFilterSet
from bundles.models import Bundle, BundleTally
from bundles.serializers import LISTED_COLUMNS, BundleSerializer, bundle_row
from lms.pagination import EnvelopePagination, read_page
from lms.tenancy import OrgScopedViewMixin


class BundleListView(OrgScopedViewMixin, generics.ListAPIView):
    """GET /api/bundles (contract 4.5): any member; the caller's organization's bundles."""

    model = Bundle
    serializer_class = BundleSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = BundleFilterSet
    pagination_class = EnvelopePagination
    searching = False

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no caller
            return Bundle.objects.none()
        return self.scoped().values_list(*LISTED_COLUMNS)

    def filter_queryset(self, queryset):
        """Validates every query parameter before the database is touched, so that one 400
        names all the bad ones (page, pageSize, search, sort). The FilterSet is built here,
        as DjangoFilterBackend builds it, to keep its cleaned ``search`` for count_rows."""
        errors = {}
        try:
            read_page(self.request)
        except ValidationError as exc:
            errors.update(exc.detail)
        filterset = DjangoFilterBackend().get_filterset(self.request, queryset, self)
        if not filterset.is_valid():
            errors.update(filter_utils.translate_validation(filterset.errors).detail)
        if errors:
            raise ValidationError(errors)
        self.searching = bool(filterset.form.cleaned_data.get("search"))
        return filterset.qs

    @property
    def plain_first_page(self) -> bool:
        """Without a search, page 1 is the first entries of the sort's index."""
        return not self.searching

    def count_rows(self, queryset) -> int:
        """Exact either way: a search counts its matches (through the trigram index on
        PostgreSQL); the whole list reads the organization's trigger-kept tally instead of
        counting every row."""
        if self.searching:
            return queryset.count()
        return BundleTally.total_for(self.org)

    @extend_schema(
        operation_id="listBundles",
        summary="List bundles",
        description="The caller's organization's bundles, a page at a time, optionally "
        "filtered by a name substring and sorted. Any member may call it. Unknown query "
        "parameters are ignored.",
        responses=BundleSerializer(many=True),
    )
    def get(self, request, *args, **kwargs):
        rows = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([bundle_row(row) for row in rows])

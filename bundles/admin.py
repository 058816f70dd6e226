from django.contrib import admin

from bundles.models import Bundle, BundleCourse, BundleDownload
from lms.admin import OrgScopedAdmin, OrgScopedAdminMixin


class BundleCourseInline(OrgScopedAdminMixin, admin.TabularInline):
    model = BundleCourse
    fields = ["course"]
    extra = 0
    autocomplete_fields = ["course"]


class BundleDownloadInline(OrgScopedAdminMixin, admin.TabularInline):
    model = BundleDownload
    fields = ["download"]
    extra = 0
    autocomplete_fields = ["download"]


@admin.register(Bundle)
class BundleAdmin(OrgScopedAdmin):
    list_display = ["name", "org", "created_at", "updated_at"]
    list_filter = [
        "org",
        ("created_at", admin.DateFieldListFilter),
        ("updated_at", admin.DateFieldListFilter),
    ]
    search_fields = ["name"]  # searched by get_search_results, as the API searches
    search_help_text = "Part of the name, in any case."
    ordering = ["-created_at"]
    list_select_related = ["org"]
    fields = ["org", "name", "description", "id", "created_at", "updated_at"]
    readonly_fields = ["id", "created_at", "updated_at"]
    # The unfiltered count would be a second COUNT(*) of every row on each page view.
    show_full_result_count = False
    list_per_page = 50
    inlines = [BundleCourseInline, BundleDownloadInline]

    def get_search_results(self, request, queryset, search_term):
        """The API's search (one substring, served by the trigram index on PostgreSQL)
        rather than Django's per-word UPPER(name) LIKE, which no index serves."""
        if not search_term:
            return queryset, False
        return queryset.search(search_term), False

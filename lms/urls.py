from importlib import import_module

from django.contrib import admin
from django.urls import URLPattern, path, register_converter
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from lms import views
from lms.admin import OrgNamedAutocompleteView
from lms.ids import IdConverter
from lms.ops.metrics import metrics_view

# Before admin.site.urls is read: the autocomplete names each result's organization for
# superusers.
admin.site.autocomplete_view = lambda request: OrgNamedAutocompleteView.as_view(  # type: ignore[assignment,method-assign,return-value]
    admin_site=admin.site
)(request)

# ``<id:name>`` in every URLconf: registered before the apps' URLconfs are spliced in.
register_converter(IdConverter, "id")


def routes(prefix: str, module: str) -> list[URLPattern]:
    """The routes of an app's URLconf, each under ``prefix``, as routes of this one.

    ``path(prefix, include(module))`` would resolve a request in two levels: Django tries
    each include in turn (one that does not match raises ``Resolver404``, caught) and builds
    a ``ResolverMatch`` at each level. Spliced, the API's routes are tried in one list and
    matched once: resolving through the includes was a noticeable share of a small read
    (docs/performance.md). The apps keep their URLconfs; names are unchanged (none is
    namespaced)."""
    spliced = []
    for route in import_module(module).urlpatterns:
        if not isinstance(route, URLPattern):
            raise TypeError(f"{module}: only routes can be spliced, not {route!r}.")
        spliced.append(
            path(prefix + str(route.pattern), route.callback, route.default_args, route.name)
        )
    return spliced


urlpatterns = [
    # The service's page for people who open its address: the API docs.
    path("", RedirectView.as_view(url="/api/docs/", permanent=False), name="root"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    *routes("api/downloads/", "downloads.urls"),
    *routes("api/learn/", "learn.urls"),
    *routes("api/bundles", "bundles.urls"),
    *routes("api/organizations/", "organizations.urls"),
    *routes("api/automations", "automations.urls"),
    *routes("api/auth/", "organizations.auth_urls"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/docs/guide", views.api_guide, name="api-guide"),
    path("admin/", admin.site.urls),
]

handler400 = "lms.errors.bad_request_view"
handler403 = "lms.errors.permission_denied_view"
handler404 = "lms.errors.not_found_view"
handler500 = "lms.errors.server_error_view"

admin.site.site_header = "LMS administration"
# "View site": this service's site for people is its API documentation.
admin.site.site_url = "/api/docs/"
admin.site.site_title = "LMS admin"

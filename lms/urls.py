from django.contrib import admin
from django.urls import include, path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from lms import views
from lms.admin import OrgNamedAutocompleteView
from lms.ids import IdConverter

# Before admin.site.urls is read: the autocomplete names each result's organization for
# superusers.
admin.site.autocomplete_view = lambda request: OrgNamedAutocompleteView.as_view(
    admin_site=admin.site
)(request)

# ``<id:name>`` in every URLconf: registered before the apps' URLconfs are included.
register_converter(IdConverter, "id")

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/downloads/", include("downloads.urls")),
    path("api/learn/", include("learn.urls")),
    path("api/bundles", include("bundles.urls")),
    path("api/organizations/", include("organizations.urls")),
    path("api/automations", include("automations.urls")),
]

handler400 = "lms.errors.bad_request_view"
handler403 = "lms.errors.permission_denied_view"
handler404 = "lms.errors.not_found_view"
handler500 = "lms.errors.server_error_view"

admin.site.site_header = "LMS administration"
# "View site": this service's site for people is its API documentation.
admin.site.site_url = "/api/docs/"
admin.site.site_title = "LMS admin"

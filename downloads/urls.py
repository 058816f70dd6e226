from django.urls import path

from downloads import views

# Path parameters carry the interface's wire names, which the OpenAPI schema shows.

urlpatterns = [
    path("<uuid:downloadId>/assets", views.DownloadAssetsView.as_view(), name="download-assets"),
    path(
        "<uuid:downloadId>/assets/<uuid:assetId>",
        views.DownloadAssetView.as_view(),
        name="download-asset",
    ),
]

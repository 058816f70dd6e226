from django.urls import path

from downloads import views

# Path parameters carry the interface's wire names, which the OpenAPI schema shows.

urlpatterns = [
    path("<id:downloadId>/assets", views.DownloadAssetsView.as_view(), name="download-assets"),
    path(
        "<id:downloadId>/assets/<id:assetId>",
        views.DownloadAssetView.as_view(),
        name="download-asset",
    ),
]

"""The production URLconf plus the textbook baseline (bench/textbook.py) under /textbook/,
so that both answer the same paths with one prefix apart. Used by the bench only."""

from django.urls import path

from bench import textbook
from lms.urls import handler400, handler403, handler404, handler500
from lms.urls import urlpatterns as lms_urls

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]

urlpatterns = [
    *lms_urls,
    path("textbook/api/bundles", textbook.BundleList.as_view()),
    path("textbook/api/learn/courses/<id:courseId>/activities", textbook.ActivityList.as_view()),
    path("textbook/api/learn/courses", textbook.MyCourses.as_view()),
    path("textbook/api/learn/courses/<id:courseId>", textbook.CourseOutline.as_view()),
    path("textbook/api/learn/progress", textbook.Progress.as_view()),
    path("textbook/api/automations/<id:id>", textbook.AutomationDetail.as_view()),
    path("textbook/api/organizations/invites/<path:token>", textbook.InviteDetail.as_view()),
    path("textbook/api/downloads/<id:downloadId>/assets", textbook.DownloadAssets.as_view()),
    path(
        "textbook/api/downloads/<id:downloadId>/assets/<id:assetId>",
        textbook.DownloadAssetDetail.as_view(),
    ),
]

from django.urls import path

from automations.views import (
    AutomationDetailView,
    AutomationListView,
    AutomationRotateSecretView,
    AutomationRunListView,
    AutomationRunRetryView,
    AutomationTestView,
)

urlpatterns = [
    path("", AutomationListView.as_view(), name="automation-list"),
    path("/<id:id>", AutomationDetailView.as_view(), name="automation-detail"),
    path("/<id:id>/runs", AutomationRunListView.as_view(), name="automation-runs"),
    path(
        "/<id:id>/rotate-secret",
        AutomationRotateSecretView.as_view(),
        name="automation-rotate-secret",
    ),
    path("/<id:id>/test", AutomationTestView.as_view(), name="automation-test"),
    path(
        "/<id:id>/runs/<id:runId>/retry",
        AutomationRunRetryView.as_view(),
        name="automation-run-retry",
    ),
]

from django.urls import path

from automations.views import AutomationDetailView, AutomationListView, AutomationRunListView

urlpatterns = [
    path("", AutomationListView.as_view(), name="automation-list"),
    path("/<id:id>", AutomationDetailView.as_view(), name="automation-detail"),
    path("/<id:id>/runs", AutomationRunListView.as_view(), name="automation-runs"),
]

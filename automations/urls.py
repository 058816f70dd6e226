from django.urls import path

from automations.views import AutomationDetailView

urlpatterns = [
    path("<uuid:id>", AutomationDetailView.as_view(), name="automation-detail"),
]

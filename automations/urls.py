from django.urls import path

from automations.views import AutomationDetailView

urlpatterns = [
    path("<id:id>", AutomationDetailView.as_view(), name="automation-detail"),
]

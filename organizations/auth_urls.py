from django.urls import path

from organizations.views import SignOutView

urlpatterns = [
    path("token", SignOutView.as_view(), name="auth-token"),
]

from django.urls import path

from organizations.views import InviteLookupView

urlpatterns = [
    # <path:...> so that any non-empty token, slashes included, reaches the view and counts
    # toward the throttle; the view answers 404 for what is not a token.
    path("invites/<path:token>", InviteLookupView.as_view(), name="invite-lookup"),
]

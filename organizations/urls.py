from django.urls import path

from organizations.views import InviteAcceptView, InviteLookupView, MembersView, MemberTokenView

urlpatterns = [
    path("members", MembersView.as_view(), name="members"),
    path("members/<id:memberId>/tokens", MemberTokenView.as_view(), name="member-tokens"),
    # <path:...> so that any non-empty token, slashes included, reaches a view and counts
    # toward the throttle; the view answers 404 for what is not a token. The accept route
    # comes first: the lookup's pattern would take ".../accept" as part of a token.
    path("invites/<path:token>/accept", InviteAcceptView.as_view(), name="invite-accept"),
    path("invites/<path:token>", InviteLookupView.as_view(), name="invite-lookup"),
]

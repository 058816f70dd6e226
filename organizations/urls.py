from django.urls import path

from organizations.views import (
    InviteAcceptView,
    InviteListView,
    InviteLookupView,
    InviteRevokeView,
    MembersView,
    MemberTokenView,
)

urlpatterns = [
    path("members", MembersView.as_view(), name="members"),
    path("members/<id:memberId>/tokens", MemberTokenView.as_view(), name="member-tokens"),
    # <path:...> so that any non-empty token, slashes included, reaches a view and counts
    # toward the throttle; the view answers 404 for what is not a token. The accept route
    # comes first: the lookup's pattern would take ".../accept" as part of a token.
    path("invites", InviteListView.as_view(), name="invites"),
    path("invites/<path:token>/accept", InviteAcceptView.as_view(), name="invite-accept"),
    # Before the lookup, whose pattern would take ".../revoke" as part of a token (no token
    # holds a slash).
    path("invites/<id:inviteId>/revoke", InviteRevokeView.as_view(), name="invite-revoke"),
    path("invites/<path:token>", InviteLookupView.as_view(), name="invite-lookup"),
]

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from lms.errors import NotFound
from organizations.errors import InviteUnavailable
from organizations.models import Invite
from organizations.selectors import invite_by_token
from organizations.serializers import InviteSerializer
from organizations.throttling import InviteLookupThrottle

_UNAVAILABLE = {
    "expired": "This invite has expired.",
    Invite.State.ACCEPTED: "This invite has already been accepted.",
    Invite.State.REVOKED: "This invite has been revoked.",
}


class InviteLookupView(APIView):
    """Public: the token is the credential. A bearer token, even an invalid one, is ignored
    (no authenticators run). Every request counts toward the per-address throttle before
    the token is looked at, so unknown tokens cannot be enumerated."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [InviteLookupThrottle]
    error_statuses = ("410",)
    omit_error_statuses = ("400",)

    def dispatch(self, request, *args, **kwargs):
        # The access log must not keep the token: only its display prefix.
        request.log_path = f"/api/organizations/invites/{kwargs.get('token', '')[:12]}..."
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(
        operation_id="read_invite",
        summary="Read an invite by its token",
        auth=[],
        parameters=[
            OpenApiParameter(
                "token",
                OpenApiTypes.STR,
                OpenApiParameter.PATH,
                description="The invite token, as issued (e.g. inv_...).",
            )
        ],
        responses={200: InviteSerializer},
    )
    def get(self, request, token: str):
        invite = invite_by_token(token)
        if invite is None:
            raise NotFound("No invite with that token.")
        if invite.status != Invite.State.PENDING:
            raise InviteUnavailable(_UNAVAILABLE[invite.status])
        response = Response(InviteSerializer(invite).data)
        response["Cache-Control"] = "no-store"
        return response

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from lms import idempotency
from lms.errors import validation_error
from lms.web.renderers import rendered
from lms.web.shapes import Shape
from organizations.selectors import available_invite
from organizations.serializers import (
    EMPTY_BODY_SCHEMA,
    AcceptedInviteSerializer,
    InviteSerializer,
)
from organizations.services import accept_invite_once
from organizations.throttling import InviteLookupThrottle

INVITE = Shape(InviteSerializer)

TOKEN_PARAMETER = OpenApiParameter(
    "token",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The invite token, as issued (e.g. inv_...).",
)


class InviteTokenView(APIView):
    """Public: the token in the path is the credential. A bearer token, even an invalid one,
    is ignored (no authenticators run). Every request counts toward the per-address throttle
    before the token is looked at, so unknown tokens cannot be enumerated."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [InviteLookupThrottle]
    error_statuses = ("410",)


class InviteLookupView(InviteTokenView):
    omit_error_statuses = ("400",)

    @extend_schema(
        operation_id="read_invite",
        summary="Read an invite by its token",
        auth=[],
        parameters=[TOKEN_PARAMETER],
        responses={200: InviteSerializer},
    )
    def get(self, request, token: str):
        invite = available_invite(token)
        response = rendered(request, INVITE.body(invite))
        response["Cache-Control"] = "no-store"
        return response


class InviteAcceptView(InviteTokenView):
    @extend_schema(
        operation_id="accept_invite",
        summary="Accept an invite: become a member and get an API token (shown once)",
        description="Public, throttled with the invite lookup. Finds the user by the invite's "
        "e-mail address (any case) or creates one with its names, gives them a membership "
        "with the invite's role (an existing membership keeps its role) and answers a new API "
        "token of it, with the invite's e-mail address and names. Exactly once: a second "
        "accept is 410, except a retry with the same Idempotency-Key within 10 minutes. See "
        "the [API guide](/api/docs/guide).",
        auth=[],
        parameters=[
            TOKEN_PARAMETER,
            OpenApiParameter(
                idempotency.HEADER,
                {"type": "string", "minLength": 1, "maxLength": idempotency.MAX_KEY_LENGTH},
                OpenApiParameter.HEADER,
                required=False,
                description="1-255 characters. An accept that succeeded is answered again, the "
                "same 201 with the same token, to the same key and invite token within 10 "
                "minutes; after that the retry is 410.",
            ),
        ],
        request={"application/json": EMPTY_BODY_SCHEMA},
        responses={
            201: OpenApiResponse(
                AcceptedInviteSerializer,
                description="Accepted; the token is shown only here (and to a retry with the "
                "same Idempotency-Key, which carries Idempotent-Replayed: true).",
            )
        },
    )
    def post(self, request, token: str):
        if request.data:
            raise validation_error(
                {
                    str(key): ["Unexpected field: the body must be empty or {}."]
                    for key in request.data
                }
            )
        key = request.META.get(idempotency.META_KEY)
        problem = idempotency.key_problem(key)
        if problem is not None:
            raise validation_error({idempotency.HEADER: [problem]})
        answer = accept_invite_once(
            raw_token=token,
            key=key,
            answer=lambda accepted: dict(AcceptedInviteSerializer(accepted).data),
        )
        response = Response(answer.body, status=answer.status)
        response["Cache-Control"] = "no-store"
        if answer.replayed:
            response["Idempotent-Replayed"] = "true"
        return response

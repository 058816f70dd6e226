import hashlib
from datetime import timedelta

from django.db.models import F
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from lms import idempotency
from lms.errors import validation_error
from lms.idempotency import Answer, remembered
from lms.pagination import envelope, page_rows, paged, read_page
from lms.tenancy import OrgScopedViewMixin, get_or_404, not_found
from lms.web.renderers import rendered
from organizations.authentication import bearer_token
from organizations.errors import InviteUnavailable
from organizations.models import INVITE_ACCEPT_KEY_PREFIX, IdempotencyRecord, Invite, Membership
from organizations.permissions import IsOrgAdmin, IsStaffRole
from organizations.sealing import open_accepted_token, seal_accepted_token
from organizations.selectors import invite_token_hash, invites_listed, with_course_ids
from organizations.serializers import (
    EMPTY_BODY_SCHEMA,
    INVITE,
    INVITE_STATUSES,
    MEMBER,
    AcceptedInviteSerializer,
    CreatedInviteSerializer,
    CreateInviteSerializer,
    InviteListParams,
    InviteSerializer,
    ListedInviteSerializer,
    MemberListQuery,
    MemberSerializer,
    MintedTokenSerializer,
    MintTokenSerializer,
)
from organizations.services import (
    AcceptedInvite,
    accept_invite,
    invite_member,
    mint_member_token,
    revoke_pending_invite,
    sign_out,
)
from organizations.throttling import InviteLookupThrottle
from organizations.wire_reads import invite_to_read, members

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
        invite = invite_to_read(token)
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
        answer = _accept_once(token, key)
        response = Response(answer.body, status=answer.status)
        response["Cache-Control"] = "no-store"
        if answer.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


# How long an accept sent with an Idempotency-Key is answered again (CONTRACT 7.3).
ACCEPT_REPLAY_TTL = timedelta(minutes=10)


def _accept_once(raw_token: str, key: str | None) -> Answer:
    """``accept_invite`` answered ``201``, once per invite token and ``Idempotency-Key``
    (``lms.idempotency``): an accept that succeeded is answered again, the same body with the
    same API token, to the same key and invite token for ``ACCEPT_REPLAY_TTL``; after that
    (and to any other key, or token) the invite is accepted, so 410.

    The answer is an ``IdempotencyRecord`` of the membership the accept made, under a digest
    of the invite's token and the key (the database holds neither), its token sealed with
    both, and deleted once expired: when it is read, or as any later accept's answer is
    stored. Of two simultaneous accepts with one key, the second waits for the invite's lock,
    finds it accepted, and answers the first's answer."""
    accepted: list[AcceptedInvite] = []

    def write() -> tuple[int, dict]:
        accepted.append(accept_invite(raw_token=raw_token))
        return 201, dict(AcceptedInviteSerializer(accepted[0]).data)

    token_hash = invite_token_hash(raw_token)
    if key is None or token_hash is None:
        return Answer(*write())
    stored_key = INVITE_ACCEPT_KEY_PREFIX + _digest(token_hash + " " + _digest(key))

    def remember(status: int, body: dict) -> None:
        made = accepted[0].membership
        IdempotencyRecord.objects.create(
            org_id=made.org_id,
            membership=made,
            key=stored_key,
            response_status=status,
            response_body={**body, "token": seal_accepted_token(body["token"], raw_token, key)},
        )

    def reopen(stored: dict) -> dict | None:
        token = open_accepted_token(stored.get("token"), raw_token, key)
        if token is None:
            return None
        # In the answer's order (a JSON column may keep its keys in another), token opened.
        return {name: stored[name] for name in ACCEPTED_FIELDS} | {"token": token}

    return remembered(
        rows=IdempotencyRecord.all_orgs.filter(
            membership__invites_accepted__token_hash=token_hash, org=F("membership__org")
        ),
        key=stored_key,
        ttl=ACCEPT_REPLAY_TTL,
        write=write,
        remember=remember,
        expired=IdempotencyRecord.all_orgs.filter(key__startswith=INVITE_ACCEPT_KEY_PREFIX),
        races=(InviteUnavailable,),
        reopen=reopen,
    )


ACCEPTED_FIELDS = tuple(AcceptedInviteSerializer().fields)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class MemberTokenView(OrgScopedViewMixin, APIView):
    """POST /api/organizations/members/{memberId}/tokens (CONTRACT 9.8): owner, admin."""

    model = Membership
    permission_classes = [IsOrgAdmin]
    omit_error_statuses = ("429",)

    @extend_schema(
        operation_id="mint_member_token",
        summary="Mint an expiring token of a member for a front end (owner, admin)",
        description="A new API token of the member, shown only in this answer, that "
        "authenticates as that member until it expires (`expiresIn` seconds, 60 to 86400, "
        "default 3600). Nobody mints a token for a role above their own (403). Roles: "
        "owner, admin. See the [API guide](/api/docs/guide).",
        request=MintTokenSerializer,
        responses={201: MintedTokenSerializer},
    )
    def post(self, request, memberId):
        body = MintTokenSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        membership = get_or_404(self.scoped(), id=memberId)
        token, raw = mint_member_token(
            membership=membership,
            minted_by=request.auth,
            expires_in=timedelta(seconds=body.validated_data["expires_in"]),
        )
        answer = {"token": raw, "membership_id": membership.id, "expires_at": token.expires_at}
        response = Response(MintedTokenSerializer(answer).data, status=201)
        response["Cache-Control"] = "no-store"
        return response


class SignOutView(APIView):
    """DELETE /api/auth/token (CONTRACT 9.8): any member revokes the token it calls with."""

    omit_error_statuses = ("400", "404", "429")

    @extend_schema(
        operation_id="sign_out",
        summary="Sign out: revoke the token of this request",
        description="Any member. The token this request carries is revoked: it answers 401 "
        "from then on (at once from the server that answered, within one second from every "
        "other). Other tokens of the member keep working.",
        request=None,
        responses={204: None},
    )
    def delete(self, request):
        sign_out(membership=request.auth, raw_token=bearer_token(request))
        return Response(status=204)


class InviteListView(OrgScopedViewMixin, APIView):
    """GET and POST /api/organizations/invites (CONTRACT 9.2): owner, admin."""

    model = Invite
    permission_classes = [IsOrgAdmin]
    omit_error_statuses = ("404", "429")

    @property
    def error_statuses(self) -> tuple[str, ...]:
        # An invite to a member's, or a pending invite's, e-mail address: 409 naming email.
        method = getattr(getattr(self, "request", None), "method", "GET")
        return ("409",) if method == "POST" else ()

    @extend_schema(
        operation_id="list_invites",
        summary="List invites (owner, admin), newest first",
        description="The organization's invites, newest first, a page at a time, without "
        "their tokens; `status` keeps those of one status (`expired`: pending past its "
        "`expiresAt`). Roles: owner, admin.",
        parameters=[
            OpenApiParameter(
                "status",
                {"type": "string", "enum": list(INVITE_STATUSES)},
                OpenApiParameter.QUERY,
                required=False,
                description="Only the invites of this status. Anything else: 400.",
            )
        ],
        responses=paged(ListedInviteSerializer),
    )
    def get(self, request):
        params = InviteListParams(data=request.query_params)
        params.is_valid(raise_exception=True)
        page = read_page(request)
        org_id = self.org.id
        listed = invites_listed(org_id, params.validated_data.get("status"))
        rows, total = page_rows(listed, page, listed.count)
        with_course_ids(rows, org_id)
        return Response(envelope(ListedInviteSerializer(rows, many=True).data, total, page))

    @extend_schema(
        operation_id="create_invite",
        summary="Invite a person (owner, admin); the token is shown this once",
        description="A pending invite to the caller's organization, with the role (never "
        "above the caller's own) and the courses that accepting it enrols the new member in. "
        "`sendEmail: true` e-mails the accept link after the invite is saved. The answer's "
        "`token` reads and accepts the invite and is shown only here. Roles: owner, admin. "
        "See the [API guide](/api/docs/guide).",
        request=CreateInviteSerializer,
        responses={201: CreatedInviteSerializer},
    )
    def post(self, request):
        body = CreateInviteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        invite, raw = invite_member(inviter=request.auth, **body.validated_data)
        invite.token = raw
        response = Response(CreatedInviteSerializer(invite).data, status=201)
        response["Cache-Control"] = "no-store"
        return response


class InviteRevokeView(OrgScopedViewMixin, APIView):
    """POST /api/organizations/invites/{inviteId}/revoke (CONTRACT 9.2): owner, admin."""

    model = Invite
    permission_classes = [IsOrgAdmin]
    omit_error_statuses = ("400", "429")
    error_statuses = ("409",)

    @extend_schema(
        operation_id="revoke_invite",
        summary="Revoke a pending invite (owner, admin)",
        description="Its token answers 410 from then on. An invite that is not pending "
        "(accepted, revoked or expired): 409. Roles: owner, admin.",
        request=None,
        responses={200: ListedInviteSerializer},
    )
    def post(self, request, inviteId):
        if inviteId is None:
            raise not_found(Invite)
        invite = revoke_pending_invite(org_id=self.org.id, invite_id=inviteId)
        with_course_ids([invite], self.org.id)
        return Response(ListedInviteSerializer(invite).data)


class MembersView(OrgScopedViewMixin, APIView):
    """GET /api/organizations/members (CONTRACT 9.1): owner, admin, instructor."""

    model = Membership
    permission_classes = [IsStaffRole]

    @extend_schema(
        responses=paged(MemberSerializer),
        operation_id="list_members",
        summary="List the organization's members",
        description="The caller's organization's members, a page at a time, sorted by the "
        "lower-cased e-mail address in code-point order (the id breaks a tie), optionally "
        "filtered by role and by a substring of the e-mail address, first or last name (any "
        "case). Every bad parameter is named in one 400; unknown ones are ignored. Roles: "
        "owner, admin, instructor.",
        parameters=[MemberListQuery],
    )
    def get(self, request, *args, **kwargs):
        errors, page = {}, None
        try:
            page = read_page(request)
        except ValidationError as exc:
            errors.update(exc.detail)
        query = MemberListQuery(data=request.query_params)
        if not query.is_valid():
            errors.update(query.errors)
        if errors:
            raise ValidationError(errors)
        rows, total = members(
            self.org.id,
            page=page,
            search=query.validated_data.get("search", ""),
            role=query.validated_data.get("role"),
        )
        return rendered(request, envelope(MEMBER.bodies_of(rows), total, page))

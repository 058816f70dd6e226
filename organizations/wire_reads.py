"""The reads that answer the wire: an invite as its lookup answers it (CONTRACT 4.6, for
``views.INVITE``) and the members list (CONTRACT 9.1), answering rows for
``serializers.MEMBER``."""

from __future__ import annotations

import uuid
from collections import namedtuple

from django.db.models import F, QuerySet

from lms.db.collation import CodePointOrder
from lms.db.compiled import Compiled
from lms.pagination import Page, page_rows
from organizations.models import SEARCH_SEPARATOR, Invite, Membership
from organizations.selectors import available, invite_token_hash

# What the lookup needs of an invite (its wire shape and its status), in the model's field
# order.
_INVITE_FIELDS = tuple(
    field.attname
    for field in Invite._meta.concrete_fields
    if field.attname in {"id", "org_id", "email", "first_name", "last_name", "state", "expires_at"}
)
# The token is global by design: it is how the caller finds the organization (unique).
_INVITE = Compiled(
    lambda token_hash: Invite.all_orgs.filter(token_hash=token_hash).values_list(*_INVITE_FIELDS),
    prepare=True,
)


def invite_to_read(raw: str) -> Invite:
    """The pending, unexpired invite a raw token opens, holding only what its lookup answers
    and its status; refused as ``selectors.available`` refuses. One query at most, its SQL
    compiled once per process."""
    token_hash = invite_token_hash(raw)
    row = None if token_hash is None else _INVITE.first(token_hash=token_hash)
    return available(None if row is None else Invite.from_db(None, _INVITE_FIELDS, row))


MemberRow = namedtuple("MemberRow", "id email first_name last_name role created_at")
_COLUMNS = ("id", "user__email", "user__first_name", "user__last_name", "role", "created_at")


def _matching(org_id: uuid.UUID, search: str, role: str | None) -> QuerySet:
    members = Membership.objects.for_org(org_id)
    if role:
        members = members.filter(role=role)
    if SEARCH_SEPARATOR in search:  # within one field or none: so it matches none
        return members.none()
    if search:
        # A field holds the term where the fields, each after a separator, do (on
        # PostgreSQL the trigram index on (org, search_key) finds them).
        members = members.filter(search_key__contains=search.lower())
    return members


def members(
    org_id: uuid.UUID, *, page: Page, search: str = "", role: str | None = None
) -> tuple[list[MemberRow], int]:
    """A page of the organization's members (of ``role``, and whose e-mail address, first
    or last name contains ``search`` in any case, when given), by the lower-cased e-mail
    address in code-point order, then the id; and how many match. Three queries at most,
    whatever the number of members: the count, the page's ids read from the index on
    (organization[, role], e-mail, id) alone (``lms.pagination.page_rows``: the rows
    skipped are index entries, never joined to their users), and those rows with their
    users. The order and the search read the membership's own keys
    (``Membership.email_key``, ``search_key``)."""
    matching = _matching(org_id, search, role)
    ordered = matching.order_by(CodePointOrder(F("email_key")), "id")
    ids, total = page_rows(ordered.values_list("id", flat=True), page, matching.count)
    if not ids:
        return [], total
    found = {
        row[0]: MemberRow(*row)
        for row in Membership.objects.for_org(org_id).filter(id__in=ids).values_list(*_COLUMNS)
    }
    return [found[member_id] for member_id in ids], total

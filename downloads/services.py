"""Every write of a download's links, for the API and the admin alike.

Each service locks the download row first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite
serializes writers with ``BEGIN IMMEDIATE``), so concurrent changes to one download run one
after the other and each sees the links the previous one left. The unique constraints on
(org, download, asset) and (org, download, seq) back the lock up: a writer that slipped
past it fails with an ``IntegrityError``: the service then runs again on what that writer
left, and answers 409 ``conflict`` (never a 500) only if the database keeps refusing.

The API's link and unlink run on every request with statements that never change shape, so
none of them is built and compiled by the ORM each time (docs/performance.md, "The link and
unlink writes"): the reads (``selectors.locked_download``, ``selectors.asset_name``,
``wire_reads.current_links``) are ``lms.db.compiled`` reads, compiled once per process; the
writes (``_insert_link``, ``_delete_link`` and the renumbering's ``statements.shift_down``)
are ``lms.db.statements``.
Each names the organization, as every query of tenant rows does, and takes its columns,
values and conversions from the model's fields, so it runs on PostgreSQL and SQLite alike.
The admin's arrange and replace path stays on the ORM.

A link is held as a row, ``Link`` (``LINK.record``): the values of the columns that
``downloads.serializers.DownloadAssetSerializer``, the one declaration of a link on the
wire, answers (``LINK.sources``), read, inserted and answered as such.

The services take typed values, read by the edge that received them: a display name comes
trimmed, not blank, of at most ``NAME_MAX_LENGTH`` characters and without NUL or a lone
surrogate (the API's ``LinkAssetInputSerializer``, the admin's link form), and is stored as
it is. What only the download's links can tell is refused here, as a ``ValidationError``
keyed by the Python name (``order``, ``display_names``: an asset that is not linked); the
API answers it by its wire name (``lms.errors.WIRE_NAMES``).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from downloads.models import Download, DownloadAsset
from downloads.selectors import asset_name, locked_download
from downloads.serializers import LINK
from downloads.wire_reads import Link, current_links
from lms.db import statements
from lms.db.integrity import UniqueRefusal
from lms.errors import Conflict, NotFound
from lms.ids import parse_id, uuid7
from lms.tenancy import OrgRef

ATTEMPTS = 3
NOT_LINKED = "No such asset is linked to this download."

P = ParamSpec("P")
R = TypeVar("R")

# A writer that slipped past the download lock breaks one of the links' unique constraints;
# anything else (a NOT NULL column left out, a foreign key, a check) is a fault, not a race,
# and retrying would only hide it.
_a_race = UniqueRefusal(DownloadAsset)


def _retried(service: Callable[P, R]) -> Callable[P, R]:
    """Runs ``service`` in its own transaction (a savepoint inside the caller's), again
    when the database refuses a write by one of the links' unique constraints. Only a writer
    that bypassed the download lock causes one; the next attempt reads what it left. Any
    other ``IntegrityError`` is raised as it is: a 500, not a conflict."""
    attempt_once = transaction.atomic(service)

    @functools.wraps(service)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return attempt_once(*args, **kwargs)
            except IntegrityError as error:
                if not _a_race(error):
                    raise
                if attempt == ATTEMPTS:
                    raise Conflict(
                        "The download's links changed during the request; retry it."
                    ) from None
        raise AssertionError("unreachable")

    return run


@_retried
def link_asset(
    *,
    org: OrgRef,
    download_id: uuid.UUID | str,
    asset_id: uuid.UUID | str,
    display_name: str | None = None,
) -> tuple[list[Link], bool]:
    """Appends the asset to the download (``seq`` = n + 1) unless it is already linked.

    Returns the download's links ordered by ``seq`` and whether a link was created. A
    re-link changes nothing (not even the display name). ``display_name`` (a display name
    as the edge reads one) defaults to the asset's name. Raises NotFound when the download
    or the asset is not in ``org``.
    """
    download = locked_download(org, download_id)
    wanted = parse_id(asset_id)
    links = current_links(download)
    # A linked asset is in the download's organization: a re-link needs no asset read.
    if any(link.asset_id == wanted for link in links):
        return links, False
    name = asset_name(download, wanted)
    now = timezone.now()
    created = Link(
        org_id=download.org_id,
        id=uuid7(),
        download_id=download.id,
        asset_id=wanted,
        # Equals n + 1 while positions are 1..n, and never collides even if they were not.
        seq=max((link.seq for link in links), default=0) + 1,
        display_name=display_name or name,
        created_at=now,
        updated_at=now,
    )
    _insert_link(created)
    return [*links, created], True


@_retried
def unlink_asset(
    *, org: OrgRef, download_id: uuid.UUID | str, asset_id: uuid.UUID | str
) -> list[Link]:
    """Removes the asset's link and renumbers the remaining links ``1..n`` in their previous
    order. The asset itself is untouched. Raises NotFound when the download is not in
    ``org`` or the asset is not linked to it."""
    download = locked_download(org, download_id)
    wanted = parse_id(asset_id)
    links = current_links(download)
    target = next((link for link in links if link.asset_id == wanted), None)
    if target is None:
        raise NotFound(NOT_LINKED)
    _delete_link(target)
    return _close_gap(org, download, [link for link in links if link.id != target.id])


@_retried
def arrange_links(
    *,
    org: OrgRef,
    download_id: uuid.UUID | str,
    order: Sequence[uuid.UUID | str],
    display_names: Mapping[uuid.UUID, str] | Mapping[str, str] | None = None,
) -> list[DownloadAsset]:
    """Puts the download's links in the order of ``order`` (asset ids naming every linked
    asset exactly once), renames those in ``display_names`` (display names as the edge
    reads them), and numbers them ``1..n``.

    Raises a ``ValidationError`` on ``order`` for an order that is not every linked asset
    once, and on ``display_names`` for a name given to an asset that is not linked, so a
    caller can never leave a gap or a duplicate behind.
    """
    download = locked_download(org, download_id)
    links = _link_models(org, download)
    by_asset = {link.asset_id: link for link in links}
    wanted = [parse_id(item) for item in order]
    if len(wanted) != len(by_asset) or set(wanted) != set(by_asset):
        raise ValidationError({"order": ["List every linked asset exactly once."]})
    ordered = [by_asset[asset_id] for asset_id in wanted if asset_id is not None]

    renamed: list[DownloadAsset] = []
    not_linked: list[str] = []
    for key, name in (display_names or {}).items():
        asset_id = parse_id(key)
        link = None if asset_id is None else by_asset.get(asset_id)
        if link is None:
            not_linked.append(f"{key} is not linked.")
        elif name != link.display_name:
            link.display_name = name
            renamed.append(link)
    if not_linked:
        raise ValidationError({"display_names": not_linked})
    _renumber(ordered, renamed=renamed)
    return ordered


@dataclass(frozen=True)
class NewLink:
    asset_id: uuid.UUID
    display_name: str | None = None


@transaction.atomic
def replace_links(
    *,
    org: OrgRef,
    download_id: uuid.UUID,
    unlink: Sequence[uuid.UUID] = (),
    link: Sequence[NewLink] = (),
    order: Sequence[uuid.UUID] = (),
    display_names: Mapping[uuid.UUID, str] | None = None,
) -> tuple[list[DownloadAsset], list[DownloadAsset]]:
    """An editor's whole change of a download's links, applied to what is linked now: unlink
    ``unlink`` (those still linked), link ``link``, then put the links in ``order`` and
    rename those in ``display_names``. Links another writer added since the editor read the
    list are kept, after the ordered ones, in their order; ids in ``order`` that are no
    longer linked are skipped. The download stays locked throughout. Returns (all links in
    order, the new links)."""
    linked = {row.asset_id for row in _locked_links(org, download_id)}
    for asset_id in unlink:
        if asset_id in linked:
            unlink_asset(org=org, download_id=download_id, asset_id=asset_id)
            linked.discard(asset_id)
    for new in link:
        link_asset(
            org=org,
            download_id=download_id,
            asset_id=new.asset_id,
            display_name=new.display_name,
        )
        linked.add(new.asset_id)
    wanted = [asset_id for asset_id in order if asset_id in linked]
    current = _locked_links(org, download_id)
    wanted += [row.asset_id for row in current if row.asset_id not in set(order)]
    names = {k: v for k, v in (display_names or {}).items() if k in linked}
    links = arrange_links(org=org, download_id=download_id, order=wanted, display_names=names)
    added = {new.asset_id for new in link}
    return links, [row for row in links if row.asset_id in added]


def _locked_links(org: OrgRef, download_id: uuid.UUID | str) -> list[Link]:
    """The download's links ordered by ``seq``, with the download locked until the caller's
    transaction ends (which must be open), so that several services apply as one change."""
    download = locked_download(org, download_id)
    return current_links(download)


def _link_models(org: OrgRef, download: Download) -> list[DownloadAsset]:
    return list(DownloadAsset.objects.for_org(org).filter(download=download).order_by("seq"))


def _close_gap(org: OrgRef, download: Download, links: list[Link]) -> list[Link]:
    """Numbers ``links`` (the download's links after one was deleted, read under its lock,
    in order) ``1..n`` again and answers them as stored: the links after the gap each move
    down by one, in two relative updates whatever their number (``statements.shift_down``,
    which says why two)."""
    shifts = [link.seq - position for position, link in enumerate(links, 1)]
    if not any(shifts):
        return links
    if any(shift not in (0, 1) for shift in shifts):
        # Positions had gaps before: not a state the services leave.
        models = _link_models(org, download)
        _renumber(models)
        return [Link._make([getattr(model, name) for name in LINK.sources]) for model in models]
    # Positions strictly increase, so the links one above their place are a suffix: the
    # rows at or after the first of them.
    first = next(link.seq for link, shift in zip(links, shifts, strict=True) if shift)
    top, now = links[-1].seq, timezone.now()
    statements.shift_down(
        DownloadAsset,
        org_id=download.org_id,
        within={"download": download.id},
        position="seq",
        first=first,
        top=top,
        updated_at=now,
    )
    return [
        link._replace(seq=link.seq - 1, updated_at=now) if shift else link
        for link, shift in zip(links, shifts, strict=True)
    ]


# Checked at import: every other column of a link has a default (``lms.db.statements``).
_INSERT_LINK = statements.Insert(DownloadAsset, LINK.sources)


def _insert_link(link: Link) -> None:
    """``INSERT`` of a new link with ``LINK.sources`` given (the id a UUIDv7 and both
    timestamps the same moment, as the model's defaults would make them) and any other
    column its default, written out (``lms.db.statements``): Django's ``create`` builds a
    model, runs each field's ``pre_save`` and compiles the statement on every new link."""
    _INSERT_LINK([link])


def _delete_link(link: Link) -> None:
    """``DELETE`` of one link by its organization and id, written out: Django's queryset
    delete builds a deletion collector (which finds nothing to cascade) and compiles the
    statement on every unlink."""
    statements.delete(DownloadAsset, org_id=link.org_id, pk=link.id)


def _renumber(links: list[DownloadAsset], *, renamed: Sequence[DownloadAsset] = ()) -> None:
    """Gives ``links`` the positions ``1..n`` in list order (all of a download's links, read
    under its lock), writing only the rows that change, in at most two statements.

    A non-deferrable unique constraint is checked row by row inside one UPDATE on
    PostgreSQL, so moving rows straight to their new positions could collide mid-statement.
    The moved rows first jump above every position in use (all distinct, none taken), then
    land on their targets, which only they claim.
    """
    moved = [link for position, link in enumerate(links, 1) if link.seq != position]
    if moved:
        offset = max(link.seq for link in links)
        DownloadAsset.objects.filter(
            org_id=moved[0].org_id, id__in=[link.id for link in moved]
        ).update(seq=F("seq") + offset)
    now = timezone.now()
    for position, link in enumerate(links, 1):
        link.seq = position
    changed = {link.id: link for link in [*moved, *renamed]}
    for link in changed.values():
        link.updated_at = now
    if changed:
        DownloadAsset.objects.bulk_update(
            list(changed.values()), ["seq", "display_name", "updated_at"]
        )

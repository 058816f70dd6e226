"""Each enrolment's standing in its course, and each activity's funnel, kept true by every
write that changes them, so that a course's roster (9.4) and report (9.5) read them instead
of every learner's progress.

An ``Enrollment`` holds its learner's standing exactly as 7.4 decides it
(``learn.selectors.course_progress``): ``stage`` (completed once the course completion is
stored, in-progress once an activity the course lists has a progress row, else
not-started), ``done`` (how many listed activities the learner completed: the progress is
``fraction_done(done, listed)``, the same for every enrolment of a course but ``done``),
``completed_at`` (the stored completion's time), and ``last_activity_at`` (the learner's
last progress report on an activity of the course). ``email_key`` and ``search_text`` hold
the learner's e-mail and names for the roster's sort and search. ``ActivityFunnel`` counts,
per activity, the learners enrolled now with a progress row on it and with it completed.

What keeps them true, each in the transaction of the change:

- a progress report (``reported``, from ``learn.services``): one written-out UPDATE of the
  learner's enrolment (its time, the activity completed, in-progress at least), which is
  also the report's lock on the enrolment; the funnel's row only on a first report or a
  first completion of the activity; ``course_completed`` when the course completion is
  stored;
- an enrolment (``enrolled``) and an unenrolment (``unenrolled``), from the enrolment
  service: set-based statements whatever the number of members (the standing read from
  the kept progress rows and completion, the funnel added to or taken from);
- a change to what a course lists (an activity or module published, unpublished, or an
  activity moved to another module: ``refresh_course`` through the receivers ``connect``
  registers): the standing of every enrolment of the course recomputed in one UPDATE (a
  new or deleted activity or module changes no standing: see ``_saved``);
- a change to a user's e-mail or names (``connect``'s receiver): their enrolments' search
  columns.

Locks: a report locks its progress row, then its enrolment, then the activity's funnel row
(at most one). An unenrolment locks the enrolments, then the funnel rows in the order of
their keys. A recompute locks the course's enrolments before it reads, so that it sees
every report that held one of them committed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import (
    Case,
    Count,
    Exists,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Concat, Lower
from django.db.models.signals import post_save, pre_save

from learn.completion import COMPLETED
from learn.models import (
    Activity,
    ActivityFunnel,
    CourseCompletion,
    Enrollment,
    Module,
    Progress,
    Stage,
)
from learn.selectors import listed_activities
from lms.db import statements
from organizations.api import Membership

# Joins the e-mail and names in ``search_text``: no search term holds it (``matches``).
SEPARATOR = "\x1f"

# --- a progress report -----------------------------------------------------------------------

_REPORTED = statements.Adjust(
    Enrollment,
    keys=("membership", "course"),
    assign=("last_activity_at",),
    add=("done",),
    at_least=("stage",),
)
_FUNNEL = statements.Tally(ActivityFunnel, keys=("activity",), counters=("started", "completed"))


def reported(
    *,
    org_id: uuid.UUID,
    membership_id: uuid.UUID,
    course_id: uuid.UUID,
    activity_id: uuid.UUID,
    now: datetime,
    started: bool,
    completed: bool,
    progress: tuple[uuid.UUID, dict],
) -> bool:
    """A report on a listed activity of the course, at ``now``: ``started`` when it made
    the learner's progress row on it, ``completed`` when it completed it for the first
    time; ``progress`` the row's id and its new values (by field name), written with the
    standing (one statement on PostgreSQL: ``lms.db.statements.Adjust``'s ``along``).
    Whether the learner is enrolled (False when an unenrolment committed since the
    report's access was read: the caller refuses the report)."""
    if not _REPORTED(
        org_id,
        (membership_id, course_id),
        assign=(now,),
        add=(int(completed),),
        at_least=(Stage.IN_PROGRESS,),
        along=(Progress, *progress),
    ):
        return False
    if started or completed:
        _FUNNEL([(org_id, activity_id, int(started), int(completed))])
    return True


def course_completed(
    *, org_id: uuid.UUID, membership_id: uuid.UUID, course_id: uuid.UUID, at: datetime
) -> None:
    """The learner's course completion was stored, at ``at``."""
    Enrollment.objects.for_org(org_id).filter(
        membership_id=membership_id, course_id=course_id
    ).update(stage=Stage.COMPLETED, completed_at=at)


# --- the standing, set-based -----------------------------------------------------------------


def _counted(queryset: QuerySet) -> Coalesce:
    """How many rows ``queryset`` (correlated to the outer row) has, as a scalar subquery."""
    counted = queryset.order_by().values("org_id").annotate(n=Count("id")).values("n")
    return Coalesce(Subquery(counted[:1]), 0)


def standing(org_id: uuid.UUID, course_id: uuid.UUID) -> dict:
    """The standing columns of an enrolment of the course, as expressions of its row
    (correlated subqueries of its learner's progress rows and completion): what 7.4
    answers them, for ``QuerySet.update``."""
    listed = listed_activities(org_id, course_id).order_by().values("id")
    mine = Progress.objects.for_org(org_id).filter(membership_id=OuterRef("membership_id"))
    on_listed = mine.filter(activity_id__in=listed)
    completion = CourseCompletion.objects.for_org(org_id).filter(
        membership_id=OuterRef("membership_id"), course_id=course_id
    )
    last = (
        mine.filter(activity__course_id=course_id)
        .order_by()
        .values("membership_id")
        .annotate(last=Max("updated_at"))
        .values("last")
    )
    return {
        "done": _counted(on_listed.filter(status=COMPLETED)),
        "completed_at": Subquery(completion.values("completed_at")[:1]),
        "last_activity_at": Subquery(last[:1]),
        "stage": Case(
            When(Exists(completion), then=Value(Stage.COMPLETED)),
            When(Exists(on_listed), then=Value(Stage.IN_PROGRESS)),
            default=Value(Stage.NOT_STARTED),
        ),
    }


def learner_columns(org_id: uuid.UUID) -> dict:
    """``email_key`` and ``search_text`` of an enrolment, as subqueries of its membership's
    user, for ``QuerySet.update``."""
    member = Membership.objects.for_org(org_id).filter(id=OuterRef("membership_id"))
    user = ("user__email", "user__first_name", "user__last_name")
    email, first, last = (Lower(name) for name in user)
    text = Concat(email, Value(SEPARATOR), first, Value(SEPARATOR), last)
    return {
        "email_key": Subquery(member.values(key=Lower("user__email"))[:1]),
        "search_text": Subquery(member.values(text=text)[:1]),
    }


def _funnel_of(
    org_id: uuid.UUID, course_id: uuid.UUID, memberships: Iterable | QuerySet, sign: int
) -> None:
    """Adds (``sign`` 1) or takes (-1) the progress rows of ``memberships`` on the
    course's activities to or from its funnel: one read, one statement."""
    counts = (
        Progress.objects.for_org(org_id)
        .filter(membership_id__in=memberships, activity__course_id=course_id)
        .order_by()
        .values("activity_id")
        .annotate(started=Count("id"), completed=Count("id", filter=Q(status=COMPLETED)))
        .values_list("activity_id", "started", "completed")
    )
    _FUNNEL(
        (org_id, activity_id, sign * started, sign * completed)
        for activity_id, started, completed in counts
    )


# --- enrolments ------------------------------------------------------------------------------


def enrolled(org_id: uuid.UUID, course_id: uuid.UUID, enrollment_ids: Sequence[uuid.UUID]) -> None:
    """New enrolments in the course (inserted in the enrolment service's transaction):
    their standing read from their learners' kept progress rows and completion (a
    re-enrolment answers what it answered before), their learner's columns, and their
    learners' progress added to the funnel. Three statements whatever their number."""
    if not enrollment_ids:
        return
    rows = Enrollment.objects.for_org(org_id).filter(course_id=course_id, id__in=enrollment_ids)
    rows.update(**standing(org_id, course_id), **learner_columns(org_id))
    _funnel_of(org_id, course_id, rows.values("membership_id"), 1)


def unenrolled(
    org_id: uuid.UUID, course_id: uuid.UUID, enrollment_ids: Sequence[uuid.UUID]
) -> None:
    """The enrolments ``enrollment_ids`` of the course are about to be deleted in this
    transaction (still there): their learners' progress is taken from the funnel. The
    enrolments are locked first (the unenrolment service has locked them already), so a
    report that held one has committed before the progress is read."""
    if not enrollment_ids:
        return
    rows = Enrollment.objects.for_org(org_id).filter(course_id=course_id, id__in=enrollment_ids)
    members = list(rows.select_for_update().values_list("membership_id", flat=True))
    _funnel_of(org_id, course_id, members, -1)


# --- what a course lists ---------------------------------------------------------------------


@transaction.atomic
def refresh_course(org_id: uuid.UUID, course_id: uuid.UUID) -> None:
    """The standing of every enrolment of the course, recomputed (what it lists changed).
    The enrolments are locked first, so that the recompute reads every report that held
    one of them as committed."""
    rows = Enrollment.objects.for_org(org_id).filter(course_id=course_id)
    for _ in rows.select_for_update().values_list("id").iterator(chunk_size=10_000):
        pass
    rows.update(**standing(org_id, course_id))


@transaction.atomic
def refresh_all(org_id: uuid.UUID) -> None:
    """The standing and learner's columns of every enrolment of the organization, and its
    funnel, recomputed from the stored rows (the data migration, a repair)."""
    enrollments = Enrollment.objects.for_org(org_id)
    ActivityFunnel.objects.for_org(org_id).delete()
    for course_id in enrollments.order_by().values_list("course_id", flat=True).distinct():
        rows = enrollments.filter(course_id=course_id)
        rows.update(**standing(org_id, course_id), **learner_columns(org_id))
        _funnel_of(org_id, course_id, rows.values("membership_id"), 1)


_LISTING = {Activity: ("published", "module_id"), Module: ("published",)}


def _remember(sender, instance, raw=False, **kwargs) -> None:
    """Before an activity or module is saved: what of it decides the listing, as stored."""
    if raw or instance._state.adding:
        instance._listed_as = None
        return
    fields = _LISTING[sender]
    instance._listed_as = (
        sender.all_orgs.filter(pk=instance.pk).values_list(*fields).first() or None
    )


def _saved(sender, instance, created, raw=False, **kwargs) -> None:
    """An activity or module saved: its course's standing recomputed when what the course
    lists changed (published, unpublished, moved to another module). A new one changes no
    standing (nobody has progress on it), nor does a deleted one (an activity with progress
    cannot be deleted: ``Progress.activity`` protects it), so neither is recomputed."""
    if raw or created:
        return
    now = tuple(getattr(instance, field) for field in _LISTING[sender])
    if getattr(instance, "_listed_as", None) != now:
        refresh_course(instance.org_id, instance.course_id)


def _user_saved(sender, instance, created, raw=False, **kwargs) -> None:
    """A user's e-mail or names may have changed: their enrolments' search columns."""
    if raw or created:
        return
    for org_id in Membership.all_orgs.filter(user=instance).values_list("org_id", flat=True):
        Enrollment.objects.for_org(org_id).filter(membership__user=instance).update(
            **learner_columns(org_id)
        )


def connect() -> None:
    """Registers the receivers that keep the standing true when what a course lists or a
    learner's names change (``LearnConfig.ready``)."""
    for model in _LISTING:
        pre_save.connect(_remember, sender=model, dispatch_uid=f"standing-remember-{model}")
        post_save.connect(_saved, sender=model, dispatch_uid=f"standing-saved-{model}")
    post_save.connect(_user_saved, sender=get_user_model(), dispatch_uid="standing-user")

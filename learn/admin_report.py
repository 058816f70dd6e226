"""A course's report page in the admin (9.7): the counts of 9.5, a chart of the funnel drawn
by the server (inline SVG: no script, no CDN), the roster of 9.4 with its filters, a page at
a time, and its CSV download with the same filters. ``CourseAdmin`` routes both views and
checks the course is one the staff user may see (section 6), as its change page does."""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from learn.models import Course, Enrollment
from learn.roster_csv import roster_csv_response
from learn.selectors import (
    STAGE_OF_STATUS,
    CourseReport,
    FunnelRow,
    course_report,
    listed_activities,
    roster,
    roster_rows,
)

PAGE_SIZE = 50
STATUSES = [
    ("", "Any status"),
    ("not-started", "Not started"),
    ("in-progress", "In progress"),
    ("completed", "Completed"),
]


class RosterFilters(forms.Form):
    """The roster's filters as 9.4 takes them (``status``, ``overdue``, ``search``)."""

    status = forms.ChoiceField(choices=STATUSES, required=False)
    overdue = forms.ChoiceField(
        choices=[("", "Overdue or not"), ("true", "Overdue"), ("false", "Not overdue")],
        required=False,
    )
    search = forms.CharField(
        max_length=200, required=False, strip=True, label="Search e-mail or name"
    )

    def narrow(self, enrollments: QuerySet[Enrollment]) -> QuerySet[Enrollment]:
        """``enrollments`` (a ``learn.selectors.roster``) as the valid filters keep them, in
        9.4's default order (most recently enrolled first, the member id breaking a tie)."""
        values = self.cleaned_data if self.is_valid() else {}
        if values.get("status"):
            enrollments = enrollments.filter(stage=STAGE_OF_STATUS[values["status"]])
        if values.get("overdue"):
            enrollments = enrollments.filter(overdue=values["overdue"] == "true")
        if values.get("search"):  # the e-mail and names, lower-cased (learn.standing)
            enrollments = enrollments.filter(search_text__contains=values["search"].lower())
        return enrollments.order_by("-created_at", "-membership_id")


@dataclass(frozen=True)
class Bar:
    """One activity's two bars in the funnel chart, in SVG units."""

    activity: FunnelRow
    label: str
    y: int
    started_width: float
    completed_width: float


# The chart's geometry (SVG user units): a label column, then the bars, then their figures.
LABEL_WIDTH, BAR_WIDTH, ROW_HEIGHT, BAR_HEIGHT = 240, 420, 44, 16


def funnel_bars(report: CourseReport) -> list[Bar]:
    """The chart's bars: per listed activity, started and completed as a share of the
    enrolled (an empty course draws empty bars)."""
    scale = BAR_WIDTH / report.enrolled if report.enrolled else 0
    return [
        Bar(
            activity=activity,
            label=f"{index}. {activity.title or f'Activity {activity.seq}'}"[:40],
            y=index * ROW_HEIGHT - ROW_HEIGHT + 8,
            started_width=round(activity.started * scale, 1),
            completed_width=round(activity.completed * scale, 1),
        )
        for index, activity in enumerate(report.activities, start=1)
    ]


def _enrol_url(course: Course) -> str | None:
    """The "Enrol members" form of the course, where the admin has one."""
    try:
        return reverse("admin:learn_course_enrol", args=[course.pk])
    except NoReverseMatch:
        return None


def report_page(model_admin, request, course: Course) -> TemplateResponse:
    """The report page of ``course`` (one the staff user may see)."""
    now = timezone.now()
    report = course_report(course.org, course.id, now=now)
    filters = RosterFilters(request.GET or None)
    listed = len(report.activities)
    page = Paginator(filters.narrow(roster(course.org, course.id, now=now)), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": f"Report: {course.title}",
        "course": course,
        "report": report,
        "completion_percent": round(report.completion_rate * 100, 1),
        "bars": funnel_bars(report),
        "chart": {
            "label_width": LABEL_WIDTH,
            "bar_x": LABEL_WIDTH + 8,
            "bar_width": BAR_WIDTH,
            "figures_x": LABEL_WIDTH + BAR_WIDTH + 16,
            "width": LABEL_WIDTH + BAR_WIDTH + 120,
            "height": max(len(report.activities), 1) * ROW_HEIGHT + 28,
            "legend_y": max(len(report.activities), 1) * ROW_HEIGHT + 16,
            "bar_height": BAR_HEIGHT,
        },
        "filters": filters,
        "page": page,
        "rows": list(roster_rows(page.object_list, listed)),
        "query": query.urlencode(),
        "csv_url": reverse("admin:learn_course_report_csv", args=[course.pk])
        + (f"?{query.urlencode()}" if query else ""),
        "enrol_url": _enrol_url(course),
        "change_url": reverse("admin:learn_course_change", args=[course.pk]),
    }
    return TemplateResponse(request, "admin/learn/course/report.html", context)


def report_csv(request, course: Course):
    """Every roster row the filters select (paging ignored), as 9.4's CSV, streamed."""
    now = timezone.now()
    listed = listed_activities(course.org, course.id).count()
    enrollments = RosterFilters(request.GET or None).narrow(roster(course.org, course.id, now=now))
    return roster_csv_response(enrollments, listed=listed, course_id=course.pk)

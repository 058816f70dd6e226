"""A course's report page in the admin (9.7): the counts of 9.5, a chart of the funnel drawn
by the server (inline SVG: no script, no CDN), the roster of 9.4 with its filters, a page at
a time, and its CSV download with the same filters. ``CourseAdmin`` routes both views and
checks the course is one the staff user may see (section 6), as its change page does."""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse

from learn.models import Course
from learn.roster_csv import DEFAULT_SORT, roster_csv_response
from learn.wire_reads import CourseReport, FunnelStep, RosterFilters, course_report, roster_page
from lms.pagination import Page

PAGE_SIZE = 50
STATUSES = [
    ("", "Any status"),
    ("not-started", "Not started"),
    ("in-progress", "In progress"),
    ("completed", "Completed"),
]


class RosterFilterForm(forms.Form):
    """The roster's filters as 9.4 takes them (``status``, ``overdue``, ``search``)."""

    status = forms.ChoiceField(choices=STATUSES, required=False)
    overdue = forms.ChoiceField(
        choices=[("", "Overdue or not"), ("true", "Overdue"), ("false", "Not overdue")],
        required=False,
    )
    search = forms.CharField(
        max_length=200, required=False, strip=True, label="Search e-mail or name"
    )

    def read(self) -> RosterFilters:
        """The valid filters as the roster reads them (none for an invalid one)."""
        values = self.cleaned_data if self.is_valid() else {}
        overdue = values.get("overdue")
        return RosterFilters(
            status=values.get("status") or None,
            overdue=None if not overdue else overdue == "true",
            search=values.get("search") or "",
        )


@dataclass(frozen=True)
class Bar:
    """One activity's two bars in the funnel chart, in SVG units."""

    activity: FunnelStep
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
    report = course_report(course.org_id, course.pk)
    form = RosterFilterForm(request.GET or None)
    number = _page_number(request.GET.get("page"))
    rows, total = roster_page(
        course.org_id, course.pk, form.read(), DEFAULT_SORT, Page(number, PAGE_SIZE)
    )
    pages = max(1, -(-total // PAGE_SIZE))
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
        "filters": form,
        "page": {
            "number": number,
            "pages": pages,
            "previous": number - 1 if number > 1 else None,
            "next": number + 1 if number < pages else None,
        },
        "total": total,
        "rows": [_shown(row) for row in rows],
        "query": query.urlencode(),
        "csv_url": reverse("admin:learn_course_report_csv", args=[course.pk])
        + (f"?{query.urlencode()}" if query else ""),
        "enrol_url": _enrol_url(course),
        "change_url": reverse("admin:learn_course_change", args=[course.pk]),
    }
    return TemplateResponse(request, "admin/learn/course/report.html", context)


def report_csv(request, course: Course):
    """Every roster row the filters select (paging ignored), as 9.4's CSV, streamed."""
    form = RosterFilterForm(request.GET or None)
    return roster_csv_response(course.org_id, course.pk, form.read(), DEFAULT_SORT)


def _page_number(text: str | None) -> int:
    """The page asked for; the first for anything else."""
    return int(text) if text and text.isdigit() and 0 < int(text) < 10**9 else 1


def _shown(row) -> dict:
    """A roster row (``learn.wire_reads.RosterRow``, times as wire text) as the page shows
    it: times to the minute."""

    def minute(text: str | None) -> str:
        return text[:16].replace("T", " ") if text else "—"

    return {
        "member_id": row.membership_id,
        "email": row.email,
        "name": f"{row.first_name} {row.last_name}",
        "enrolled_at": minute(row.enrolled_at),
        "due_at": minute(row.due_at),
        "status": row.status,
        "percent": round(row.progress * 100),
        "completed_at": minute(row.completed_at),
        "last_activity_at": minute(row.last_activity_at),
        "overdue": row.overdue,
    }

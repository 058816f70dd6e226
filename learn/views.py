"""Thin views: parse, call the service or the read (``learn.selectors``, or
``learn.wire_reads`` on a hot path, whose rows the ``Shape`` of the serializer answers),
answer."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from learn.models import Course, Enrollment
from learn.roster_csv import roster_csv_response
from learn.selectors import course_progress, members_named
from learn.serializers import (
    ACTIVITY,
    COMPLETIONS,
    COURSE_OUTLINE,
    COURSE_REPORT,
    ENROLLED_COURSE,
    ROSTER_ROW,
    ActivitySerializer,
    CompletionsQuerySerializer,
    CompletionsSerializer,
    CourseOutlineSerializer,
    CourseProgressSerializer,
    CourseReportSerializer,
    EnrolInputSerializer,
    EnrolledCourseSerializer,
    EnrolledSerializer,
    ProgressInputSerializer,
    ProgressResultSerializer,
    RosterQuerySerializer,
    RosterRowSerializer,
)
from learn.services import UNSET, UnknownMembers, enroll_members, record_progress, unenroll
from learn.wire_reads import (
    RosterFilters,
    completions_feed,
    course_outline,
    course_report,
    list_published_activities,
    my_courses,
    roster_page,
)
from lms import idempotency
from lms.errors import flatten_details, validation_error
from lms.idempotency import idempotent
from lms.pagination import Page, PageParams, envelope, paged, read_page
from lms.tenancy import OrgScopedViewMixin, ids_or_404, not_found
from lms.web.csv_export import CsvErrorsAsJson, wants_csv
from lms.web.renderers import rendered
from lms.web.request_id import current_request_id
from organizations.api import IdempotencyRecord, IsOrgAdmin, IsStaffRole

IDEMPOTENCY_KEY = OpenApiParameter(
    idempotency.HEADER,
    {"type": "string", "minLength": 1, "maxLength": idempotency.MAX_KEY_LENGTH},
    OpenApiParameter.HEADER,
    required=False,
    description="1-255 characters. The same key from the same caller within 24 hours answers "
    "the first answer and stores nothing twice.",
)


def _valid(request, serializer_class):
    """The body read by ``serializer_class``, valid, and the ``Idempotency-Key`` header
    checked with it: a 400 names every problem of both."""
    serializer = serializer_class(data=request.data)
    details = {} if serializer.is_valid() else flatten_details(serializer.errors)
    problem = idempotency.key_problem(request.META.get(idempotency.META_KEY))
    if problem:
        details[idempotency.HEADER] = [problem]
    if details:
        raise validation_error(details)
    return serializer


def _idempotent(request, write):
    """``write()`` (status, body) answered, once per caller and ``Idempotency-Key`` (an
    ``IdempotencyRecord``); a replay carries ``Idempotent-Replayed: true``."""
    answer = idempotent(
        store=IdempotencyRecord,
        org=request.auth.org,
        membership=request.auth,
        key=request.META.get(idempotency.META_KEY),
        write=write,
    )
    response = rendered(request, answer.body, status=answer.status)
    if answer.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


class ProgressView(APIView):
    """Report what the learner did on an activity of a course they are enrolled in; the
    server alone decides the status from the activity's completion rule and every report so
    far. Every report is stored as received, unknown types included; an invalid report of a
    known type rejects the whole request and nothing is stored. Report types and completion
    rules: the [API guide](/api/docs/guide)."""

    @extend_schema(
        operation_id="report_progress",
        summary="Report usage of an activity; the server decides its status",
        request=ProgressInputSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OpenApiResponse(
                ProgressResultSerializer,
                description="The status after all reports so far. A replayed answer carries "
                "Idempotent-Replayed: true.",
            )
        },
        examples=[
            OpenApiExample(
                "Time spent",
                value={
                    "activity": "0193b3d6-a4c8-7f1e-9d2b-3c4d5e6f7a8b",
                    "reports": [{"type": "time", "seconds": 30}],
                },
                request_only=True,
            ),
            OpenApiExample(
                "Watched segment",
                value={
                    "activity": "0193b3d6-a4c8-7f1e-9d2b-3c4d5e6f7a8b",
                    "reports": [{"type": "media", "from": 0, "to": 42.5, "duration": 600}],
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request):
        serializer = _valid(request, ProgressInputSerializer)

        def write() -> tuple[int, dict]:
            outcome = record_progress(
                org=request.auth.org,
                membership=request.auth,
                activity_id=serializer.validated_data["activity"],
                reports=serializer.validated_data["reports"],
                request_id=current_request_id() or "",
            )
            return 200, {
                "status": outcome.status,
                "progress": outcome.progress,
                "remaining": outcome.remaining,
            }

        return _idempotent(request, write)


class CourseActivitiesView(OrgScopedViewMixin, APIView):
    """The published activities of published modules of a published course the caller is
    enrolled in, ordered by the module's seq, then the activity's seq. `settings` is
    returned as stored."""

    @extend_schema(
        operation_id="list_course_activities",
        summary="List a course's published activities (enrolled members)",
        responses={
            200: OpenApiResponse(
                ActivitySerializer(many=True), description="In listing order; may be empty."
            )
        },
    )
    def get(self, request, courseId):  # the interface's name for the path parameter
        rows = list_published_activities(org=self.org, membership=request.auth, course_id=courseId)
        return rendered(request, ACTIVITY.bodies(rows))


class CourseProgressView(OrgScopedViewMixin, APIView):
    """The caller's status and progress on a course they are enrolled in, and on each
    activity the listing shows, in its order. Access as for the listing."""

    @extend_schema(
        operation_id="read_course_progress",
        summary="Read your progress on a course and its activities (enrolled members)",
        responses={200: CourseProgressSerializer},
    )
    def get(self, request, courseId):  # the interface's name for the path parameter
        progress = course_progress(org=self.org, membership=request.auth, course_id=courseId)
        return Response(CourseProgressSerializer(progress).data)


class MyCoursesView(OrgScopedViewMixin, APIView):
    """The published courses the caller is enrolled in, most recently enrolled first, a page
    at a time, each with the caller's status, progress and completion."""

    model = Enrollment

    @extend_schema(
        responses=paged(EnrolledCourseSerializer),
        operation_id="list_my_courses",
        summary="List the courses you are enrolled in",
        description="Any member: the published courses the caller is enrolled in, most "
        "recently enrolled first (the course id, descending, breaks a tie), with the caller's "
        "status, progress and completion on each. Unknown query parameters are ignored.",
    )
    def get(self, request, *args, **kwargs):
        page = read_page(request)
        courses, total = my_courses(org=self.org, membership=request.auth, page=page)
        return rendered(request, envelope(ENROLLED_COURSE.bodies(courses), total, page))


class CourseOutlineView(OrgScopedViewMixin, APIView):
    """A course the caller is enrolled in: its published modules by seq, each with its
    published activities by seq (those the listing shows), with the caller's status,
    progress and what remains of each. Access as for the listing."""

    @extend_schema(
        operation_id="read_course_outline",
        summary="Read a course's outline with your progress (enrolled members)",
        responses={200: CourseOutlineSerializer},
    )
    def get(self, request, courseId):  # the interface's name for the path parameter
        outline = course_outline(org=self.org, membership=request.auth, course_id=courseId)
        return rendered(request, COURSE_OUTLINE.body(outline))


def _roster_query(request, *, paged: bool = True) -> tuple[Page | None, RosterFilters, list]:
    """The page (None when not ``paged``: the CSV ignores paging), the filters and the sort
    of a roster request, or one 400 naming every bad parameter (before the course is looked
    up: the contract's check order)."""
    errors: dict = {}
    page = None
    try:
        page = read_page(request) if paged else None
    except ValidationError as exc:
        errors.update(exc.detail)  # type: ignore[arg-type]  # a dict: read_page names fields
    query = RosterQuerySerializer(data=request.query_params)
    if not query.is_valid():
        errors.update(query.errors)
    if errors:
        raise ValidationError(errors)
    data = query.validated_data
    overdue = data.get("overdue")
    filters = RosterFilters(
        status=data.get("status"),
        overdue=None if overdue is None else overdue == "true",
        search=data.get("search") or "",
    )
    return page, filters, data["sort"]


class CourseRosterReads(CsvErrorsAsJson):
    """9.4's GET of a course's enrolments: the roster (owner, admin, instructor; an
    unpublished course too), as JSON pages or, to ``Accept: text/csv``, every selected row
    as CSV. Mixed into the view of ``courses/{courseId}/enrollments``."""

    @extend_schema(
        operation_id="list_course_enrollments",
        summary="A course's roster: each learner's standing (owner, admin, instructor)",
        description="The learners enrolled in the course, a page at a time, each with the "
        "status, progress and completion their own course progress answers, their last "
        "activity, due date and whether they are overdue; filtered by status, overdue and a "
        "search, and sorted. A course that is not published answers too. Unknown query "
        "parameters are ignored.",
        parameters=[PageParams, RosterQuerySerializer],
        responses={
            (200, "application/json"): RosterRowSerializer(many=True),
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR,
                description="To Accept: text/csv: every row the filters and sort select "
                "(paging ignored), streamed as a CSV download with the row's names as its "
                "header.",
            ),
        },
    )
    def get(self, request, courseId):  # the interface's name for the path parameter
        csv = wants_csv(request)
        page, filters, sort = _roster_query(request, paged=not csv)
        course_id = _course_id_or_404(self.org.id, courseId)
        if csv:
            return roster_csv_response(self.org.id, course_id, filters, sort)
        rows, total = roster_page(self.org.id, course_id, filters, sort, page)
        return rendered(request, envelope(ROSTER_ROW.bodies(rows), total, page))


def _course_id_or_404(org_id, course_id):
    """The id of a course of the organization, published or not; else NotFound."""
    found = Course.objects.for_org(org_id).filter(**ids_or_404(Course, {"id": course_id}))
    if not found.exists():
        raise not_found(Course)
    return course_id


COURSE_ID = OpenApiParameter(
    "courseId", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The course's id."
)


class CourseEnrollmentsView(CourseRosterReads, OrgScopedViewMixin, APIView):  # type: ignore[misc]
    """A course's enrolments (CONTRACT 9.3; 9.4's roster is this path's GET)."""

    model = Course
    permission_classes = [IsStaffRole]

    @extend_schema(
        operation_id="enroll_members",
        summary="Enrol members in a course",
        description="Enrols up to 500 members, by member id or by e-mail address, all or "
        "nothing: an id or address that is no member's is a 400 naming it and nobody is "
        "enrolled. Each new enrolment is one enrollment.created event. A course that is not "
        "published takes enrolments too. Roles: owner, admin, instructor.",
        parameters=[COURSE_ID, IDEMPOTENCY_KEY],
        request=EnrolInputSerializer,
        responses={
            200: OpenApiResponse(
                EnrolledSerializer,
                description="Who was enrolled and who already was. A replayed answer carries "
                "Idempotent-Replayed: true.",
            )
        },
        examples=[
            OpenApiExample(
                "By e-mail, with a due date",
                value={"emails": ["ada@example.com"], "dueAt": "2027-01-31T17:00:00Z"},
                request_only=True,
            )
        ],
    )
    def post(self, request, courseId):  # the interface's name for the path parameter
        data = _valid(request, EnrolInputSerializer).validated_data
        member_ids = members_named(org_id=self.org.id, data=data)

        def write() -> tuple[int, dict]:
            try:
                enrolled = enroll_members(
                    org_id=self.org.id,
                    course_id=courseId,
                    membership_ids=member_ids,
                    due_at=data.get("dueAt", UNSET),
                )
            except UnknownMembers:  # a membership deleted since: named as any unknown one
                members_named(org_id=self.org.id, data=data)
                raise
            return 200, EnrolledSerializer(enrolled).data

        return _idempotent(request, write)


class CourseEnrollmentView(OrgScopedViewMixin, APIView):
    """One member's enrolment in a course."""

    model = Course
    permission_classes = [IsStaffRole]
    # No body is read, so neither validation_error nor malformed_request can happen.
    omit_error_statuses = ("400",)

    @extend_schema(
        operation_id="unenroll_member",
        summary="Unenrol a member from a course",
        description="Deletes the enrolment. The learner's reports and progress are kept: "
        "enrolled again, they answer the same status, progress and completedAt as before. A "
        "member who is not enrolled, or an unknown id: 404. Roles: owner, admin, instructor.",
        parameters=[
            COURSE_ID,
            OpenApiParameter(
                "memberId", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The member's id."
            ),
        ],
        request=None,
        responses={204: OpenApiResponse(description="Unenrolled.")},
    )
    def delete(self, request, courseId, memberId):  # the interface's names
        unenroll(org_id=self.org.id, course_id=courseId, membership_id=memberId)
        return Response(status=204)


class CompletionsView(OrgScopedViewMixin, APIView):
    """Every course completion of the organization (one per `course.completed` event), in
    the order they became visible, after the cursor `after`: an integrator polls with the
    `next` of each answer and never misses nor repeats a completion, even when completions
    commit out of the order of their times. Completions stay after an unenrolment."""

    permission_classes = [IsOrgAdmin]

    @extend_schema(
        operation_id="list_completions",
        summary="Read the completions feed (owner, admin)",
        parameters=[CompletionsQuerySerializer],
        responses={200: CompletionsSerializer},
    )
    def get(self, request):
        query = CompletionsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        values = query.validated_data
        feed = completions_feed(
            org=self.org,
            after=values.get("after"),
            cursor=request.query_params.get("after"),
            limit=values["limit"],
            course_id=values.get("course_id"),
        )
        return rendered(request, COMPLETIONS.body(feed))


class CourseReportView(OrgScopedViewMixin, APIView):
    """9.5: a course's report (owner, admin, instructor; an unpublished course too)."""

    model = Course
    permission_classes = [IsStaffRole]

    @extend_schema(
        operation_id="read_course_report",
        summary="A course's report: counts by status and its funnel (owner, admin, instructor)",
        description="How many learners are enrolled now, by status and overdue, the "
        "completion rate, and for each activity the course lists (in the listing's order) "
        "how many of them started and completed it.",
        responses={200: CourseReportSerializer},
    )
    def get(self, request, courseId):  # the interface's name for the path parameter
        report = course_report(self.org.id, ids_or_404(Course, {"id": courseId})["id"])
        return rendered(request, COURSE_REPORT.body(report))

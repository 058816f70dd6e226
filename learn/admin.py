"""Staff edit courses (an outline: modules in order, each with its activities inside) and
enrollments, and look at learners' progress and raw reports, which are read-only. A
completion rule is chosen and filled in with fields (``learn.admin_forms``); the settings
they make pass ``learn.completion.read_settings`` on save (via ``Activity.clean``): a
bad rule is a form error, never a broken API."""

from __future__ import annotations

from dataclasses import dataclass

import nested_admin
from django import forms
from django.contrib import admin
from django.db.models import Count
from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from nested_admin.formsets import NestedInlineFormSet

from learn import admin_report
from learn.admin_forms import RULE_INPUTS, ActivityForm, EnrolMembersForm, rule_summary
from learn.models import (
    Activity,
    Course,
    CourseCompletion,
    Enrollment,
    Module,
    Progress,
    ProgressReport,
)
from learn.serializers import COURSE_OUTLINE
from learn.services import UNSET, enroll, enroll_members, unenroll
from learn.wire_reads import course_preview
from lms.admin import (
    OrgScopedAdmin,
    OrgScopedAdminMixin,
    ReadOnlyMixin,
    json_block,
    pretty_json,
)
from lms.errors import NotFound
from organizations.api import member_ids_by_email


class OrderedInlineFormSet(NestedInlineFormSet):
    """The rows of one parent (a course's modules, a module's activities): their positions
    are distinct, and a row left without one goes after the others, in the order shown."""

    def _construct_form(self, i, **kwargs):
        form = super()._construct_form(i, **kwargs)
        # The parent object itself, not only its id: a new course is not in the database yet
        # when its rows are validated, and their clean() reads its organization.
        setattr(form.instance, self.fk.name, self.instance)
        return form

    def save_existing_objects(self, initial_forms=None, commit=True):
        """nested_admin's, without its second lookup of each row by id alone (a tenant-owned
        model's manager refuses one): each form already holds its row, read through this
        formset's queryset, the parent's rows. Rows do not move between parents here."""
        saved = []
        for form in initial_forms or ():
            row = form.instance
            if row.pk is None:
                continue
            if self._should_delete_form(form):
                self.deleted_objects.append(row)
                self.delete_existing(row, commit=commit)
            elif form.has_changed():
                self.changed_objects.append((row, form.changed_data))
                saved.append(self.save_existing(form, row, commit=commit))
                if not commit:
                    self.saved_forms.append(form)
        return saved

    def add_fields(self, form, index) -> None:
        super().add_fields(form, index)
        if "seq" in form.fields:
            form.fields["seq"].required = False
            form.fields["seq"].help_text = "Blank: after the others."

    def clean(self) -> None:
        super().clean()
        rows = [
            form
            for form in self.forms
            if getattr(form, "cleaned_data", None) and not form.cleaned_data.get("DELETE")
        ]
        seen: set[int] = set()
        for form in rows:
            seq = form.cleaned_data.get("seq")
            if seq is None:
                continue
            if seq in seen:
                form.add_error("seq", "Another row already has this position.")
            seen.add(seq)
        following = max(seen, default=0) + 1
        for form in rows:
            if form.cleaned_data.get("seq") is None and "seq" in form.fields:
                form.cleaned_data["seq"] = form.instance.seq = following
                following += 1


class ModuleForm(forms.ModelForm):
    class Meta:
        model = Module
        fields = ["seq", "title", "published"]
        labels = {"seq": "Position"}
        widgets = {"seq": forms.NumberInput(attrs={"class": "lms-position", "min": 1})}

    class Media:
        js = ["learn/admin/outline.js"]
        css = {"all": ["learn/admin/course.css"]}


class ActivityInline(OrgScopedAdminMixin, nested_admin.NestedTabularInline):
    """A module's activities, in order, each with its completion rule as fields."""

    model = Activity
    form = ActivityForm
    formset = OrderedInlineFormSet
    fk_name = "module"
    fields = ["seq", "title", "published", "rule_type", *RULE_INPUTS, "settings"]
    ordering = ["seq", "id"]
    extra = 0
    show_change_link = True

    def get_queryset(self, request):
        # Each row's clean() reads its course.
        return super().get_queryset(request).select_related("course")


class ModuleInline(OrgScopedAdminMixin, nested_admin.NestedStackedInline):
    model = Module
    form = ModuleForm
    formset = OrderedInlineFormSet
    fields = [("seq", "title", "published")]
    ordering = ["seq", "id"]
    inlines = [ActivityInline]
    extra = 0


@admin.register(Course)
class CourseAdmin(nested_admin.NestedModelAdminMixin, OrgScopedAdmin):
    """The course outline: its modules in order, each with its activities inside, so that a
    new course is built, modules and activities included, in one page and one save."""

    list_display = ["title", "org", "published", "module_count", "activity_count", "created_at"]
    list_filter = ["org", "published"]
    search_fields = ["title"]
    list_select_related = ["org"]
    ordering = ["title", "id"]
    inlines = [ModuleInline]
    readonly_fields = ["id", "created_at", "updated_at"]
    fields = ["org", "title", "published", "id", "created_at", "updated_at"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                module_total=Count("modules", distinct=True),
                activity_total=Count("activities", distinct=True),
            )
        )

    @admin.display(description="modules", ordering="module_total")
    def module_count(self, obj: Course) -> int:
        return obj.module_total

    @admin.display(description="activities", ordering="activity_total")
    def activity_count(self, obj: Course) -> int:
        return obj.activity_total

    def get_fields(self, request, obj=None):
        return self.fields if obj is not None else ["org", "title", "published"]

    def get_urls(self):
        """The course's report page and its roster's CSV (9.7), and its preview as a learner,
        for those who may see the course, and its "Enrol members" form for those who may
        change it: another organization's course is a 404, as its change page is."""
        view = self.admin_site.admin_view
        return [
            path("<path:object_id>/report/", view(self.report_view), name="learn_course_report"),
            path(
                "<path:object_id>/report/enrollments.csv",
                view(self.report_csv_view),
                name="learn_course_report_csv",
            ),
            path(
                "<path:object_id>/preview/",
                view(self.preview_view),
                name="learn_course_preview",
            ),
            path("<path:object_id>/enrol/", view(self.enrol_view), name="learn_course_enrol"),
            *super().get_urls(),
        ]

    def _visible_or_404(self, request, object_id) -> Course:
        course = self.get_object(request, object_id)
        if course is None or not self.has_view_permission(request, course):
            raise Http404("No such course.")
        return course

    def report_view(self, request, object_id):
        return admin_report.report_page(self, request, self._visible_or_404(request, object_id))

    def report_csv_view(self, request, object_id):
        return admin_report.report_csv(request, self._visible_or_404(request, object_id))

    def preview_view(self, request, object_id):
        """The course as an enrolled learner who has reported nothing reads it, built by the
        API's own read; nobody is enrolled, so no automation runs."""
        course = self._visible_or_404(request, object_id)
        try:
            body = COURSE_OUTLINE.body(course_preview(org=course.org, course_id=course.pk))
        except NotFound:  # not published: learners see nothing of it
            body = None
        context = {
            **self.admin_site.each_context(request),
            "title": f"Preview of {course.title}",
            "course": course,
            "opts": self.opts,
            "modules": body and _previewed(body),
            "body": body and json_block(body),
        }
        return TemplateResponse(request, "admin/learn/course/preview.html", context)

    def get_readonly_fields(self, request, obj=None):
        # Modules, activities and enrollments share the course's organization.
        return [*self.readonly_fields, "org"] if obj is not None else self.readonly_fields

    def enrol_view(self, request, object_id):
        """ "Enrol members" (CONTRACT 9.7): the addresses of members of the course's
        organization are enrolled through the enrolment service, as the API enrols; the
        page then says who was enrolled, who already was, and which addresses are no
        member's. A course the staff user may not change is a 404 (section 6)."""
        course = self.get_object(request, object_id)
        if course is None or not self.has_change_permission(request, course):
            raise Http404("No such course.")
        form, outcome = EnrolMembersForm(request.POST or None), None
        if request.method == "POST" and form.is_valid():
            outcome = enrol_by_email(
                course, form.cleaned_data["emails"], form.cleaned_data["due_at"]
            )
        context = {
            **self.admin_site.each_context(request),
            "title": f"Enrol members in {course.title}",
            "opts": self.opts,
            "original": course,
            "form": form,
            "outcome": outcome,
        }
        return TemplateResponse(request, "admin/learn/course/enrol_members.html", context)


@dataclass(frozen=True)
class EnrolOutcome:
    """What the "Enrol members" form did, by address as typed."""

    enrolled: list[str]
    already_enrolled: list[str]
    not_members: list[str]


def enrol_by_email(course: Course, emails: list[str], due_at) -> EnrolOutcome:
    """Enrol the members of the course's organization with these addresses (any case) through
    ``enroll_members``; the addresses that are no member's are answered, not refused. A due
    date of None keeps the due dates of those enrolled already."""
    by_email = member_ids_by_email(course.org_id, emails)
    found = {email: by_email[email.lower()] for email in emails if email.lower() in by_email}
    result = enroll_members(
        org_id=course.org_id,
        course_id=course.id,
        membership_ids=list(found.values()),
        due_at=UNSET if due_at is None else due_at,
    )
    enrolled = set(result.enrolled)
    return EnrolOutcome(
        enrolled=[email for email, member in found.items() if member in enrolled],
        already_enrolled=[email for email, member in found.items() if member not in enrolled],
        not_members=[email for email in emails if email not in found],
    )


def _previewed(body: dict) -> list[dict]:
    """The preview's modules from the outline's body, each activity with its rule at a
    glance and what it asks (its ``remaining``) as JSON."""
    return [
        {
            **module,
            "activities": [
                {
                    **activity,
                    "rule": rule_summary(activity["settings"]),
                    "asks": pretty_json(activity["remaining"]),
                }
                for activity in module["activities"]
            ],
        }
        for module in body["modules"]
    ]


class ActivityPageForm(ActivityForm):
    class Meta(ActivityForm.Meta):
        fields = ["module", *ActivityForm.Meta.fields]

    def clean(self):
        data = super().clean()
        module, seq = data.get("module"), data.get("seq")
        siblings = Activity.all_orgs.filter(module=module, seq=seq).exclude(pk=self.instance.pk)
        if module is not None and seq is not None and siblings.exists():
            self.add_error("seq", "Another activity of this module already has this position.")
        return data


@admin.register(Activity)
class ActivityAdmin(OrgScopedAdmin):
    """One activity at a time. A new activity joins its module's course; an activity does
    not move to another course."""

    form = ActivityPageForm
    list_display = ["__str__", "course", "module", "position", "rule", "published", "org"]
    list_filter = ["org", "published"]
    search_fields = ["title", "course__title"]
    list_select_related = ["course", "module", "org"]
    ordering = ["course__title", "module__seq", "seq"]
    readonly_fields = ["id", "org", "course", "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["module", ("seq", "title"), "published"]}),
        ("Completion", {"fields": ["rule_type", *RULE_INPUTS]}),
        (None, {"fields": ["settings"]}),
        ("Record", {"fields": readonly_fields, "classes": ["collapse"]}),
    ]

    @admin.display(description="position", ordering="seq")
    def position(self, obj: Activity) -> int:
        return obj.seq

    @admin.display(description="completion")
    def rule(self, obj: Activity) -> str:
        return rule_summary(obj.settings)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "module":
            field.queryset = field.queryset.select_related("course").order_by(
                "course__title", "seq"
            )
            field.label_from_instance = lambda module: f"{module.course.title} / {module}"
        return field


class EnrollmentForm(forms.ModelForm):
    class Meta:
        model = Enrollment
        fields = ["course", "membership", "due_at"]


@admin.register(Enrollment)
class EnrollmentAdmin(OrgScopedAdmin):
    form = EnrollmentForm
    list_display = ["membership", "course", "org", "created_at", "due_at"]
    list_filter = ["org", "course"]
    search_fields = ["membership__user__email", "course__title"]
    list_select_related = ["membership__user", "membership__org", "course", "org"]

    def get_readonly_fields(self, request, obj=None):
        # An enrolment does not move: unenrol and enrol again instead.
        return ["course", "membership"] if obj is not None else []

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "membership":
            field.queryset = field.queryset.select_related("user", "org")
        return field

    def save_model(self, request, obj, form, change):
        """Enrolling and a change of the due date go through the enrolment service (a new
        enrollment is its enrollment.created event)."""
        saved = enroll(membership=obj.membership, course=obj.course, due_at=obj.due_at)
        obj.pk, obj.org_id, obj.created_at = saved.pk, saved.org_id, saved.created_at
        obj._state.adding = False

    def delete_model(self, request, obj):
        """Unenrolling keeps the learner's progress (``learn.services.unenroll``)."""
        unenroll(org_id=obj.org_id, course_id=obj.course_id, membership_id=obj.membership_id)

    def delete_queryset(self, request, queryset):
        for enrollment in queryset:
            self.delete_model(request, enrollment)


class ReportPayloadMixin:
    @admin.display(description="payload")
    def payload_json(self, obj):
        return json_block(obj.payload)


class ProgressReportInline(
    ReportPayloadMixin, ReadOnlyMixin, OrgScopedAdminMixin, admin.TabularInline
):
    model = ProgressReport
    fields = ["created_at", "position", "type", "payload_json", "request_id"]
    readonly_fields = fields
    ordering = ["created_at", "position"]
    extra = 0


def _minute(moment) -> str:
    """A time in a list, to the minute in the admin's time zone ("-" for none)."""
    return "-" if moment is None else f"{timezone.localtime(moment):%Y-%m-%d %H:%M}"


@admin.register(Progress)
class ProgressAdmin(ReadOnlyMixin, OrgScopedAdmin):
    # Short columns (the learner's e-mail, a percentage, times to the minute) that wrap:
    # the list fits a 1,440 px screen with both sidebars open.
    list_display = ["learner", "activity", "status", "percent", "started", "completed", "org"]
    list_filter = ["org", "status"]
    search_fields = ["membership__user__email", "activity__title"]
    list_select_related = ["membership__user", "membership__org", "activity"]
    fields = [
        "org",
        "membership",
        "activity",
        "status",
        "progress",
        "started_at",
        "completed_at",
        "state_json",
    ]
    readonly_fields = fields
    inlines = [ProgressReportInline]

    class Media:
        css = {"all": ["learn/admin/progress.css"]}

    @admin.display(description="learner", ordering="membership__user__email")
    def learner(self, obj: Progress) -> str:
        return obj.membership.user.email

    @admin.display(description="progress", ordering="progress")
    def percent(self, obj: Progress) -> str:
        return f"{obj.progress:.0%}"

    @admin.display(description="started", ordering="started_at")
    def started(self, obj: Progress) -> str:
        return _minute(obj.started_at)

    @admin.display(description="completed", ordering="completed_at")
    def completed(self, obj: Progress) -> str:
        return _minute(obj.completed_at)

    @admin.display(description="state")
    def state_json(self, obj):
        return json_block(obj.state)


@admin.register(ProgressReport)
class ProgressReportAdmin(ReportPayloadMixin, ReadOnlyMixin, OrgScopedAdmin):
    """Every report as received, paginated (the progress page shows one learner's)."""

    list_display = ["created_at", "type", "progress", "request_id"]
    list_filter = ["org", "type"]
    search_fields = ["request_id", "progress__membership__user__email"]
    list_select_related = ["progress__membership__user", "progress__activity"]
    fields = ["org", "progress", "created_at", "position", "type", "payload_json", "request_id"]
    readonly_fields = fields


@admin.register(CourseCompletion)
class CourseCompletionAdmin(ReadOnlyMixin, OrgScopedAdmin):
    """Who completed which course, and when (written by progress reports alone; it latches)."""

    list_display = ["membership", "course", "completed_at", "org"]
    list_filter = ["org", "completed_at"]
    search_fields = ["membership__user__email", "course__title"]
    list_select_related = ["membership__user", "membership__org", "course", "org"]
    ordering = ["-completed_at"]
    fields = ["org", "membership", "course", "completed_at"]
    readonly_fields = fields

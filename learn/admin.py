"""Staff edit courses (modules and activities inline, in order) and enrollments, and look at
learners' progress and raw reports, which are read-only. Activity settings, and so their
completion rule, pass ``learn.completion.validate_settings`` on save (via ``Activity.clean``):
a bad rule is a form error, never a broken API."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin
from django.utils.html import format_html

from learn.models import (
    Activity,
    Course,
    CourseCompletion,
    Enrollment,
    Module,
    Progress,
    ProgressReport,
)
from learn.services import enroll
from lms.admin import OrgScopedAdmin, OrgScopedAdminMixin


class OrderedInlineFormSet(forms.BaseInlineFormSet):
    """Positions of siblings are distinct: ``seq_scope`` names what they are unique within."""

    seq_scope: tuple[str, ...] = ()

    def _construct_form(self, i, **kwargs):
        form = super()._construct_form(i, **kwargs)
        # The parent object itself, not only its id: a new course is not in the database yet
        # when its rows are validated, and their clean() reads its organization.
        setattr(form.instance, self.fk.name, self.instance)
        return form

    def clean(self) -> None:
        super().clean()
        seen: set[tuple] = set()
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE") or data.get("seq") is None:
                continue
            key = (*(data.get(name) for name in self.seq_scope), data["seq"])
            if key in seen:
                form.add_error("seq", "Another row already has this position.")
            seen.add(key)


class ModuleFormSet(OrderedInlineFormSet):
    seq_scope = ()


class ActivityFormSet(OrderedInlineFormSet):
    seq_scope = ("module",)

    def add_fields(self, form, index) -> None:
        super().add_fields(form, index)
        # Only the course's own modules (saved ones: add a module first, then its activities).
        field = form.fields.get("module")
        if field is not None:
            field.queryset = (
                Module.objects.filter(org_id=self.instance.org_id, course=self.instance).order_by(
                    "seq", "id"
                )
                if self.instance.pk
                else Module.objects.none()
            )


class ModuleInline(OrgScopedAdminMixin, admin.TabularInline):
    model = Module
    formset = ModuleFormSet
    fields = ["seq", "title", "published"]
    ordering = ["seq", "id"]
    extra = 0


class ActivityInline(OrgScopedAdminMixin, admin.TabularInline):
    model = Activity
    formset = ActivityFormSet
    fk_name = "course"
    fields = ["module", "seq", "title", "published", "settings"]
    ordering = ["module__seq", "seq", "id"]
    extra = 0
    show_change_link = True


@admin.register(Course)
class CourseAdmin(OrgScopedAdmin):
    list_display = ["title", "org", "published", "created_at"]
    list_filter = ["org", "published"]
    search_fields = ["title"]
    list_select_related = ["org"]
    inlines = [ModuleInline, ActivityInline]
    readonly_fields = ["id", "created_at", "updated_at"]
    fields = ["org", "title", "published", "id", "created_at", "updated_at"]

    def get_readonly_fields(self, request, obj=None):
        # Modules, activities and enrollments share the course's organization.
        return [*self.readonly_fields, "org"] if obj is not None else self.readonly_fields


class ActivityForm(forms.ModelForm):
    class Meta:
        model = Activity
        fields = ["module", "seq", "title", "published", "settings"]

    def clean(self):
        data = super().clean()
        module, seq = data.get("module"), data.get("seq")
        siblings = Activity.all_orgs.filter(module=module, seq=seq).exclude(pk=self.instance.pk)
        if module is not None and seq is not None and siblings.exists():
            self.add_error("seq", "Another activity of this module already has this position.")
        return data


@admin.register(Activity)
class ActivityAdmin(OrgScopedAdmin):
    """One activity at a time, for a roomier settings editor. A new activity joins its
    module's course; an activity does not move to another course."""

    form = ActivityForm
    list_display = ["__str__", "course", "module", "seq", "published", "org"]
    list_filter = ["org", "published"]
    search_fields = ["title", "course__title"]
    list_select_related = ["course", "module", "org"]
    ordering = ["course__title", "module__seq", "seq"]
    readonly_fields = ["id", "org", "course", "created_at", "updated_at"]

    def get_fields(self, request, obj=None):
        return ["module", "seq", "title", "published", "settings", *self.readonly_fields]

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
        fields = ["course", "membership"]


@admin.register(Enrollment)
class EnrollmentAdmin(OrgScopedAdmin):
    form = EnrollmentForm
    list_display = ["membership", "course", "org", "created_at"]
    list_filter = ["org", "course"]
    search_fields = ["membership__user__email", "course__title"]
    list_select_related = ["membership__user", "membership__org", "course", "org"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "membership":
            field.queryset = field.queryset.select_related("user", "org")
        return field

    def save_model(self, request, obj, form, change):
        """A new enrollment goes through the enrolment service (its enrollment.created)."""
        if change:
            return super().save_model(request, obj, form, change)
        saved = enroll(membership=obj.membership, course=obj.course)
        obj.pk, obj.org_id, obj.created_at = saved.pk, saved.org_id, saved.created_at
        obj._state.adding = False


def pretty_json(value) -> str:
    """``value`` as indented JSON for people to read, whatever its depth; text stays text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def json_block(value):
    return format_html('<pre class="lms-json">{}</pre>', pretty_json(value))


class ReadOnlyMixin:
    """Progress is written by the API alone; staff may look, never touch."""

    def has_add_permission(self, request, *args):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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


@admin.register(Progress)
class ProgressAdmin(ReadOnlyMixin, OrgScopedAdmin):
    list_display = ["membership", "activity", "status", "progress", "started_at", "completed_at"]
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

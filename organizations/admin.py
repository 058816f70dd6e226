from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db.models import Q
from django.utils import timezone

from lms.admin import OrgScopedAdmin, admin_org_ids, admin_roles
from lms.errors import Conflict
from organizations.models import (
    INVITE_MAX_COURSES,
    ROLE_RANK,
    ApiToken,
    Invite,
    InviteCourse,
    Membership,
    Organization,
    User,
)
from organizations.services import (
    create_api_token,
    create_invite,
    reissue_invite,
    revoke_invite,
    revoke_tokens,
)


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "is_staff", "is_active"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        org_ids = admin_org_ids(request)
        if org_ids is None:
            return qs
        return qs.filter(memberships__org_id__in=org_ids).distinct()

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    has_add_permission = has_change_permission = has_delete_permission = has_view_permission


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "created_at"]
    search_fields = ["name"]

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        org_ids = admin_org_ids(request)
        return qs if org_ids is None else qs.filter(id__in=org_ids)

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request, obj=None):
        org_ids = admin_org_ids(request)
        return org_ids is None or obj is None or obj.id in org_ids

    def has_change_permission(self, request, obj=None):
        return self.has_view_permission(request, obj)

    def has_add_permission(self, request):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


# --- roles: nobody grants a role above their own --------------------------------------------


def grantable_roles(request, org_id) -> list[str]:
    """The roles the staff user may give, or act for, in the organization: their own and
    those below it (every role for a superuser; none outside their organizations)."""
    roles = admin_roles(request)
    if roles is None:
        return list(Membership.Role.values)
    own = ROLE_RANK.get(roles.get(org_id), 0)
    return [role for role, rank in ROLE_RANK.items() if rank <= own]


def manageable_memberships(request, queryset):
    """The memberships the staff user may act for: in their organizations, with a role no
    higher than their own there."""
    roles = admin_roles(request)
    if roles is None:
        return queryset
    allowed = Q(pk__in=[])
    for org_id in roles:
        allowed |= Q(org_id=org_id, role__in=grantable_roles(request, org_id))
    return queryset.filter(allowed)


class RoleCheckedAdminMixin:
    """The ``role`` a form sets is one its user may grant in the record's organization."""

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change=change, **kwargs)

        class RoleCheckedForm(form_class):
            def clean(self):
                cleaned = super().clean()
                org = cleaned.get("org") or getattr(self.instance, "org", None)
                role = cleaned.get("role")
                if org is not None and role and role not in grantable_roles(request, org.id):
                    self.add_error("role", "You may not grant a role above your own.")
                return cleaned

        return form_class if admin_roles(request) is None else RoleCheckedForm

    def formfield_for_choice_field(self, db_field, request, **kwargs):
        roles = admin_roles(request)
        if db_field.name == "role" and roles is not None:
            highest = max((ROLE_RANK[role] for role in roles.values()), default=0)
            kwargs["choices"] = [
                (value, label)
                for value, label in Membership.Role.choices
                if ROLE_RANK[value] <= highest
            ]
        return super().formfield_for_choice_field(db_field, request, **kwargs)


@admin.register(Membership)
class MembershipAdmin(RoleCheckedAdminMixin, OrgScopedAdmin):
    list_display = ["user", "org", "role", "created_at"]
    list_filter = ["org", "role"]
    search_fields = ["user__email"]
    list_select_related = ["user", "org"]
    autocomplete_fields = ["user"]

    def get_autocomplete_fields(self, request):
        # The user autocomplete is answered by UserAdmin, which only superusers may view;
        # other staff pick from the people of their own organizations instead.
        return self.autocomplete_fields if request.user.is_superuser else []

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        org_ids = admin_org_ids(request)
        if db_field.name == "user" and org_ids is not None:
            kwargs["queryset"] = User.objects.filter(memberships__org_id__in=org_ids).distinct()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _may_act_for(self, request, obj) -> bool:
        return obj is None or obj.role in grantable_roles(request, obj.org_id)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._may_act_for(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._may_act_for(request, obj)


def refuse_past(expires_at):
    if expires_at is not None and expires_at <= timezone.now():
        raise forms.ValidationError("The expiry must be in the future.")
    return expires_at


class ApiTokenForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ["membership", "name", "expires_at"]
        help_texts = {"expires_at": "Blank: the token does not expire (revoke it to end it)."}

    def clean_expires_at(self):
        expires_at = self.cleaned_data.get("expires_at")
        # Unchanged on an existing token: one that expired may still be renamed.
        if "expires_at" not in self.changed_data:
            return expires_at
        return refuse_past(expires_at)


class TokenStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("active", "Active"), ("revoked", "Revoked"), ("expired", "Expired")]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True).filter(
                Q(expires_at__isnull=True) | Q(expires_at__gt=now)
            )
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        return queryset


def token_status(token: ApiToken) -> str:
    if token.revoked_at is not None:
        return "revoked"
    return "active" if token.is_active else "expired"


@admin.register(ApiToken)
class ApiTokenAdmin(OrgScopedAdmin):
    """Tokens are created here and shown once; afterwards only their prefix is visible."""

    form = ApiTokenForm
    list_display = [
        "prefix",
        "name",
        "membership",
        "status",
        "expires_at",
        "revoked_at",
        "created_at",
    ]
    list_filter = ["org", TokenStatusFilter]
    list_select_related = ["membership__user", "membership__org"]
    search_fields = ["prefix", "name", "membership__user__email"]
    readonly_fields = ["prefix", "org", "status", "revoked_at", "created_at"]
    actions = ["revoke"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["membership", "name", "expires_at"]
        return [
            "prefix",
            "org",
            "membership",
            "name",
            "status",
            "expires_at",
            "revoked_at",
            "created_at",
        ]

    @admin.display(description="status")
    def status(self, obj: ApiToken) -> str:
        return token_status(obj)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return [*self.readonly_fields, "membership"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "membership":
            # Only memberships whose role is not above the staff user's own there.
            qs = Membership.all_orgs.select_related("user", "org")
            kwargs["queryset"] = manageable_memberships(request, qs)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        _, raw = create_api_token(
            membership=form.cleaned_data["membership"],
            name=form.cleaned_data.get("name") or "",
            expires_at=form.cleaned_data.get("expires_at"),
            instance=obj,
        )
        messages.warning(
            request,
            f"New API token (shown only this once, copy it now): {raw}",
        )

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        count = revoke_tokens(queryset)
        self.message_user(request, f"Revoked {count} token(s).")


def invite_url_path(raw_token: str) -> str:
    return f"/api/organizations/invites/{raw_token}"


# The course model, by the invite's link to it: identity imports no other app.
COURSE = InviteCourse._meta.get_field("course").related_model


class InviteForm(forms.ModelForm):
    courses = forms.ModelMultipleChoiceField(
        queryset=COURSE.all_orgs.none(),
        required=False,
        help_text="Accepting the invite enrols the new member in these courses (of the "
        "invite's organization, published or not).",
    )

    class Meta:
        model = Invite
        fields = ["org", "email", "first_name", "last_name", "role", "invited_by", "expires_at"]
        help_texts = {"expires_at": "7 days from now unless changed, as create_invite does."}

    def clean_expires_at(self):
        return refuse_past(self.cleaned_data.get("expires_at"))

    def clean(self):
        cleaned = super().clean()
        org, courses = cleaned.get("org"), cleaned.get("courses") or []
        if org is not None and any(course.org_id != org.id for course in courses):
            self.add_error("courses", "Choose only courses of the invite's organization.")
        if len(courses) > INVITE_MAX_COURSES:
            self.add_error("courses", f"Choose at most {INVITE_MAX_COURSES} courses.")
        return cleaned


def invite_courses_field(request) -> dict:
    """The courses a staff user may put in an invite: those of their organizations (every
    course for a superuser, who reads each one's organization)."""
    org_ids = admin_org_ids(request)
    if org_ids is None:
        return {"queryset": COURSE.all_orgs.select_related("org"), "label": _course_with_org}
    return {"queryset": COURSE.objects.filter(org_id__in=org_ids), "label": str}


def _course_with_org(course) -> str:
    return f"{course} ({course.org.name})"


class InviteStatusFilter(admin.SimpleListFilter):
    """The status staff read: an expired invite is a pending one past its expiry."""

    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("pending", "Pending"), ("expired", "Expired")] + [
            choice for choice in Invite.State.choices if choice[0] != Invite.State.PENDING
        ]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "pending":
            return queryset.filter(state=Invite.State.PENDING, expires_at__gt=now)
        if self.value() == "expired":
            return queryset.filter(state=Invite.State.PENDING, expires_at__lte=now)
        if self.value() in Invite.State.values:
            return queryset.filter(state=self.value())
        return queryset


@admin.register(Invite)
class InviteAdmin(RoleCheckedAdminMixin, OrgScopedAdmin):
    """Invites are created here and their token shown once; afterwards only the prefix is
    visible. Revoking and re-issuing (a new token, shown once) are actions of the list."""

    form = InviteForm
    list_display = [
        "email",
        "first_name",
        "last_name",
        "org",
        "role",
        "status",
        "token_prefix",
        "expires_at",
        "accepted_at",
        "created_at",
    ]
    list_filter = ["org", InviteStatusFilter, "role"]
    list_select_related = ["org"]
    search_fields = ["email", "first_name", "last_name", "token_prefix"]
    actions = ["revoke", "reissue"]
    add_fields = ["org", "email", "first_name", "last_name", "role", "invited_by", "expires_at"]
    add_fields += ["courses"]
    change_fields = [
        "token_prefix",
        "org",
        "email",
        "first_name",
        "last_name",
        "role",
        "course_titles",
        "invited_by",
        "status",
        "expires_at",
        "accepted_by",
        "accepted_at",
        "created_at",
    ]
    # A new expiry or state comes only with the actions (re-issue, revoke).
    change_readonly = ["token_prefix", "org", "invited_by", "status", "expires_at", "created_at"]
    change_readonly += ["accepted_by", "accepted_at"]  # acceptance comes only from the API
    change_readonly += ["course_titles"]  # an invite's courses are given when it is made

    def get_fields(self, request, obj=None):
        return self.add_fields if obj is None else self.change_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.change_readonly

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change=change, **kwargs)
        if obj is not None:
            return form_class
        courses = invite_courses_field(request)

        class WithCourses(form_class):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                field = self.fields["courses"]
                field.queryset = courses["queryset"]
                field.label_from_instance = courses["label"]

        return WithCourses

    @admin.display(description="courses")
    def course_titles(self, obj: Invite) -> str:
        course_ids = obj.course_ids
        titles = dict(
            COURSE.objects.filter(org_id=obj.org_id, id__in=course_ids).values_list("id", "title")
        )
        return ", ".join(titles[course_id] for course_id in course_ids if course_id in titles)

    def get_changeform_initial_data(self, request):
        """ "Invited by" starts as the staff user's own membership of the organization the
        form starts with (or of their one organization)."""
        initial = super().get_changeform_initial_data(request)
        if "invited_by" not in initial:
            mine = Membership.all_orgs.filter(user=request.user)
            if initial.get("org"):
                mine = mine.filter(org_id=initial["org"])
            found = list(mine.values_list("id", flat=True)[:2])
            if len(found) == 1:
                initial["invited_by"] = found[0]
        return initial

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "invited_by":
            qs = Membership.all_orgs.select_related("user", "org")
            org_ids = admin_org_ids(request)
            kwargs["queryset"] = qs if org_ids is None else qs.filter(org_id__in=org_ids)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description="status")
    def status(self, obj: Invite) -> str:
        return obj.status

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        data = form.cleaned_data
        _, raw = create_invite(
            org=data["org"],
            email=data["email"],
            first_name=data["first_name"],
            last_name=data["last_name"],
            role=data["role"],
            invited_by=data.get("invited_by"),
            expires_at=data.get("expires_at"),
            instance=obj,
            course_ids=[course.id for course in data.get("courses") or []],
        )
        messages.warning(
            request,
            f"Invite token for {obj.email} (shown only this once, copy it now): {raw} "
            f"- lookup: {invite_url_path(raw)}",
        )
        others = (
            Invite.objects.for_org(obj.org_id)
            .filter(email__iexact=obj.email, state=Invite.State.PENDING)
            .filter(expires_at__gt=timezone.now())
            .exclude(pk=obj.pk)
            .count()
        )
        if others:
            messages.warning(
                request,
                f"{obj.email} already had {others} pending invite(s) in {obj.org.name}: each "
                "works until it is accepted, revoked or expires. Revoke the older one if it "
                "should no longer work.",
            )

    @admin.action(description="Revoke selected invites")
    def revoke(self, request, queryset):
        count = sum(revoke_invite(invite=invite) for invite in queryset)
        self.message_user(request, f"Revoked {count} invite(s).")

    @admin.action(description="Re-issue selected invites (new token and expiry)")
    def reissue(self, request, queryset):
        for invite in queryset:
            try:
                _, raw = reissue_invite(invite=invite)
            except Conflict as exc:
                self.message_user(request, f"{invite.email}: {exc.message}", messages.ERROR)
                continue
            messages.warning(
                request,
                f"New invite token for {invite.email} (shown only this once, the old one no "
                f"longer works): {raw} - lookup: {invite_url_path(raw)}",
            )

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from lms.admin import OrgScopedAdmin, admin_org_ids
from organizations.models import ApiToken, Membership, Organization, User
from organizations.services import create_api_token, revoke_tokens


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


@admin.register(Membership)
class MembershipAdmin(OrgScopedAdmin):
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


class ApiTokenForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ["membership", "name", "expires_at"]


@admin.register(ApiToken)
class ApiTokenAdmin(OrgScopedAdmin):
    """Tokens are created here and shown once; afterwards only their prefix is visible."""

    form = ApiTokenForm
    list_display = ["prefix", "name", "membership", "expires_at", "revoked_at", "created_at"]
    list_filter = ["org"]
    list_select_related = ["membership__user", "membership__org"]
    search_fields = ["prefix", "name", "membership__user__email"]
    readonly_fields = ["prefix", "org", "revoked_at", "created_at"]
    actions = ["revoke"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["membership", "name", "expires_at"]
        return ["prefix", "org", "membership", "name", "expires_at", "revoked_at", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return [*self.readonly_fields, "membership"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "membership":
            qs = Membership.objects.select_related("user", "org")
            org_ids = admin_org_ids(request)
            kwargs["queryset"] = qs if org_ids is None else qs.filter(org_id__in=org_ids)
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

"""Admin tenancy: a staff user who is not a superuser sees and edits only the records of the
organizations where they are an owner or admin, and is offered only those in every choice.
The generic pieces every app's admin builds on live here too (``json_block``,
``ReadOnlyMixin``): no app imports another app's admin."""

import json

from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.admin.views.autocomplete import AutocompleteJsonView
from django.contrib.admin.widgets import RelatedFieldWidgetWrapper
from django.utils.html import format_html
from django.utils.module_loading import import_string

from lms.ids import parse_id
from lms.tenancy import OrgScopedModel


def _with_org(obj) -> str:
    label = str(obj)
    return label if obj.org.name in label else f"{label} ({obj.org.name})"


def admin_roles(request) -> dict | None:
    """The staff user's role in each organization they administer (``owner`` or ``admin``);
    None for a superuser, who administers all. Which memberships count is the identity app's
    to say (``settings.LMS_ADMINISTERED_ORGS``)."""
    user = request.user
    if user.is_superuser:
        return None
    cached = getattr(request, "_lms_admin_roles", None)
    if cached is None:
        cached = import_string(settings.LMS_ADMINISTERED_ORGS)(user)
        request._lms_admin_roles = cached
    return cached


def admin_org_ids(request) -> list | None:
    """Ids of the organizations a staff user may administer; None means all (superuser)."""
    roles = admin_roles(request)
    return None if roles is None else list(roles)


def own_org_id(request):
    """The one organization the user belongs to as an owner or admin (a superuser's own
    memberships count too), which an add form starts with; None for none or several."""
    roles = admin_roles(request)
    if roles is None:
        roles = getattr(request, "_lms_own_roles", None)
        if roles is None:
            roles = import_string(settings.LMS_ADMINISTERED_ORGS)(request.user)
            request._lms_own_roles = roles
    return next(iter(roles)) if len(roles) == 1 else None


def tenant_model():
    return apps.get_model(settings.LMS_TENANT_MODEL)


class OrgScopedAdminMixin:
    """Limits a ModelAdmin (or inline) to the staff user's organizations.

    Rows, organization choices and every foreign key to a tenant-owned model are filtered,
    so a staff user can neither see nor pick another organization's records.
    """

    org_field = "org"

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        org_ids = admin_org_ids(request)
        if org_ids is None:
            return qs
        return qs.filter(**{f"{self.org_field}__in": org_ids})

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        org_ids = admin_org_ids(request)
        if org_ids is not None:
            organization = tenant_model()
            # Narrow what a subclass chose (its own filter or select_related), never widen it.
            related = db_field.related_model
            chosen = kwargs.get("queryset")
            if related is organization:
                base = organization.objects.all() if chosen is None else chosen
                kwargs["queryset"] = base.filter(id__in=org_ids)
            elif issubclass(related, OrgScopedModel):
                base = related.objects.all() if chosen is None else chosen
                kwargs["queryset"] = base.filter(org_id__in=org_ids)
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        return self._labelled(field, db_field, org_ids)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        # No "delete" link next to a choice: it deletes the chosen record itself (an asset
        # from the library, an inviter's membership), not the link to it.
        if field is not None and isinstance(field.widget, RelatedFieldWidgetWrapper):
            field.widget.can_delete_related = False
        return field

    @staticmethod
    def _labelled(field, db_field, org_ids):
        """A superuser, who sees several organizations, reads each choice's organization."""
        if field is None:
            return field
        related = db_field.related_model
        if org_ids is None and issubclass(related, OrgScopedModel) and hasattr(field, "queryset"):
            field.queryset = field.queryset.select_related("org")
            field.label_from_instance = _with_org
        return field

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        org_ids = admin_org_ids(request)
        related = db_field.related_model
        if org_ids is not None and issubclass(related, OrgScopedModel):
            kwargs["queryset"] = related.objects.filter(org_id__in=org_ids)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_changeform_initial_data(self, request):
        """A new record starts in the user's organization when they belong to one."""
        initial = super().get_changeform_initial_data(request)
        if self.org_field == "org" and "org" not in initial:
            org_id = own_org_id(request)
            if org_id is not None:
                initial["org"] = org_id
        return initial

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        # A record's organization is fixed once created (see OrgScopedModel).
        is_page = isinstance(self, admin.ModelAdmin)  # an inline's obj is its parent
        if is_page and obj is not None and obj.pk is not None and self.org_field == "org":
            fields.append("org")
        return fields

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_staff

    def _may_manage(self, request, obj=None) -> bool:
        if not (request.user.is_active and request.user.is_staff):
            return False
        org_ids = admin_org_ids(request)
        if org_ids is None:
            return True
        if not org_ids:
            return False
        if obj is None:
            return True
        return getattr(obj, f"{self.org_field}_id", None) in org_ids

    def has_view_permission(self, request, obj=None):
        return self._may_manage(request, obj)

    def has_add_permission(self, request, *args):
        return self._may_manage(request)

    def has_change_permission(self, request, obj=None):
        return self._may_manage(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._may_manage(request, obj)


class OrganizationListFilter(admin.SimpleListFilter):
    """An organization filter that offers only the organizations the user may see."""

    title = "organization"
    parameter_name = "org"

    def __init__(self, request, params, model, model_admin):
        self.org_field = getattr(model_admin, "org_field", "org")
        super().__init__(request, params, model, model_admin)

    def lookups(self, request, model_admin):
        org_ids = admin_org_ids(request)
        orgs = tenant_model().objects.all()
        if org_ids is not None:
            orgs = orgs.filter(id__in=org_ids)
        return [(str(org.id), org.name) for org in orgs.order_by("name")]

    def queryset(self, request, queryset):
        value = parse_id(self.value())
        if value is None:
            return queryset
        return queryset.filter(**{f"{self.org_field}_id": value})


class OrgScopedAdmin(OrgScopedAdminMixin, admin.ModelAdmin):
    """ModelAdmin of a tenant-owned model. Write ``"org"`` in list_filter as usual: it is
    replaced by a filter that lists only the user's organizations."""

    def get_list_filter(self, request):
        return [self._scoped_filter(f) for f in super().get_list_filter(request)]

    def _scoped_filter(self, entry):
        if entry == self.org_field:
            return OrganizationListFilter
        if isinstance(entry, str) and get_fields_from_path(self.model, entry)[-1].is_relation:
            # Django's related filter offers every row of the related model, other
            # organizations' included; this one offers those the scoped rows point at.
            return (entry, admin.RelatedOnlyFieldListFilter)
        return entry


class OrgNamedAutocompleteView(AutocompleteJsonView):
    """The admin's autocomplete answers: a superuser, who searches several organizations,
    reads each result's organization, as in the admin's other choices."""

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.request.user.is_superuser and issubclass(queryset.model, OrgScopedModel):
            queryset = queryset.select_related("org")
        return queryset

    def serialize_result(self, obj, to_field_name):
        result = super().serialize_result(obj, to_field_name)
        if self.request.user.is_superuser and isinstance(obj, OrgScopedModel):
            result["text"] = _with_org(obj)
        return result


def pretty_json(value) -> str:
    """``value`` as indented JSON for people to read, whatever its depth; text stays text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def json_block(value):
    """A JSON value of a row, shown whole in a change page or a list (``pre.lms-json``)."""
    return format_html('<pre class="lms-json">{}</pre>', pretty_json(value))


class ReadOnlyMixin:
    """For rows the API alone writes (progress, automation runs): staff may look, never
    touch."""

    def has_add_permission(self, request, *args):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

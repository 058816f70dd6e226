"""The media library and downloads with their links inline.

Link changes made here go through ``downloads.services`` (the same code as the API): the
download is locked, removing a link never deletes its asset, and positions come out
``1..n`` whatever numbers were typed in.
"""

from __future__ import annotations

import math

from django import forms
from django.contrib import admin
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.forms.models import BaseInlineFormSet
from django.template.defaultfilters import filesizeformat

from downloads import services
from downloads.models import Asset, Download, DownloadAsset
from lms.admin import OrgScopedAdmin, OrgScopedAdminMixin


def link_count(**outer: OuterRef) -> Coalesce:
    """How many links match ``outer``, as one correlated subquery per changelist (no N+1)
    that filters on the organization first, so it runs on the (org, ...) indexes."""
    links = (
        DownloadAsset.objects.filter(org=OuterRef("org"), **outer)
        .order_by()
        .values("org")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(links, output_field=IntegerField()), 0)


class InUseFilter(admin.SimpleListFilter):
    title = "in use"
    parameter_name = "in_use"

    def lookups(self, request, model_admin):
        return [("yes", "Linked to a download"), ("no", "Not linked")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(download_count__gt=0)
        if self.value() == "no":
            return queryset.filter(download_count=0)
        return queryset


class SourceFilter(admin.SimpleListFilter):
    title = "source"
    parameter_name = "source"

    def lookups(self, request, model_admin):
        return [("file", "Uploaded file"), ("url", "URL")]

    def queryset(self, request, queryset):
        if self.value() == "file":
            return queryset.exclude(file="")
        if self.value() == "url":
            return queryset.exclude(url="")
        return queryset


@admin.register(Asset)
class AssetAdmin(OrgScopedAdmin):
    """The media library, with how many downloads use each asset."""

    list_display = ["name", "org", "content_type", "readable_size", "download_count", "created_at"]
    list_filter = ["org", InUseFilter, SourceFilter, "content_type", "created_at"]
    search_fields = ["name", "url", "content_type"]
    list_select_related = ["org"]
    readonly_fields = ["used_by", "created_at", "updated_at"]
    # Django 6's default; said now, without the transitional warning.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def get_queryset(self, request):
        return (
            super().get_queryset(request).annotate(download_count=link_count(asset=OuterRef("pk")))
        )

    def get_readonly_fields(self, request, obj=None):
        # An asset's links live in its organization; moving it would orphan them.
        return [*self.readonly_fields, "org"] if obj else self.readonly_fields

    @admin.display(description="size", ordering="size")
    def readable_size(self, obj: Asset) -> str:
        return "" if obj.size is None else filesizeformat(obj.size)

    @admin.display(description="downloads", ordering="download_count")
    def download_count(self, obj: Asset) -> int:
        return obj.download_count

    @admin.display(description="used by")
    def used_by(self, obj: Asset) -> str:
        names = (
            Download.objects.for_org(obj.org_id)
            .filter(links__asset=obj)
            .order_by("name")
            .values_list("name", flat=True)
        )
        return ", ".join(names) or "no download"

    def save_model(self, request, obj, form, change):
        upload = form.cleaned_data.get("file") if "file" in form.changed_data else None
        if upload is not None and hasattr(upload, "size"):
            obj.size = upload.size
            obj.content_type = obj.content_type or getattr(upload, "content_type", "") or ""
        super().save_model(request, obj, form, change)


class DownloadAssetForm(forms.ModelForm):
    """A link's row: the admin's edge for a link. Its display name is read here, as the
    model's field has it: trimmed (the form field strips), at most ``NAME_MAX_LENGTH``
    characters, no NUL (Django's validator), each refused on the row's own input; a blank
    name means the asset's name. The formset hands the services these cleaned values."""

    class Meta:
        model = DownloadAsset
        fields = ["asset", "seq", "display_name"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        seq = self.fields["seq"]
        seq.required = False
        seq.validators.append(MinValueValidator(1))
        seq.widget.attrs["min"] = 1
        seq.label = "Position"
        seq.help_text = "Type a position to move the link there; blank appends."
        name = self.fields["display_name"]
        name.required = False
        name.help_text = "Blank: the asset's name."
        if not self.instance._state.adding:
            # Replacing the asset of a link is an unlink plus a link: delete the row, add one.
            self.fields["asset"].disabled = True


class DownloadAssetFormSet(BaseInlineFormSet):
    """Saves through the services instead of row by row, so the order stays ``1..n``."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        org_id = self.instance.org_id
        seen: set = set()
        for form in self._kept_forms():
            asset = form.cleaned_data.get("asset")
            if asset is None:
                continue
            if org_id is not None and asset.org_id != org_id:
                form.add_error("asset", "Pick an asset of the download's organization.")
            if asset.pk in seen:
                form.add_error("asset", "This asset is already linked to the download.")
            seen.add(asset.pk)

    def _kept_forms(self) -> list[forms.ModelForm]:
        """Forms of existing links that are not deleted, and filled-in new rows."""
        kept = []
        for form in self.forms:
            if not hasattr(form, "cleaned_data") or self._should_delete_form(form):
                continue
            if form.instance._state.adding and not form.has_changed():
                continue
            kept.append(form)
        return kept

    def save(self, commit=True):
        """The page's change, applied by ``services.replace_links`` to what is linked now;
        ``commit`` is ignored (the service commits)."""
        kept = self._kept_forms()
        added = [f for f in kept if f.instance._state.adding]
        edited = [f for f in kept if not f.instance._state.adding]
        links, new_links = services.replace_links(
            org=self.instance.org,
            download_id=self.instance.id,
            unlink=[
                f.instance.asset_id for f in self.deleted_forms if not f.instance._state.adding
            ],
            link=[
                services.NewLink(
                    f.cleaned_data["asset"].pk, f.cleaned_data.get("display_name") or None
                )
                for f in added
            ],
            order=[f.cleaned_data["asset"].pk for f in sorted(kept, key=self._position_key)],
            display_names={
                f.cleaned_data["asset"].pk: f.cleaned_data.get("display_name")
                or f.cleaned_data["asset"].name
                for f in edited
                if "display_name" in f.changed_data
            },
        )
        by_asset = {link.asset_id: link for link in links}
        self.new_objects = new_links
        self.changed_objects = [
            (by_asset[f.cleaned_data["asset"].pk], f.changed_data)
            for f in edited
            if f.changed_data and f.cleaned_data["asset"].pk in by_asset
        ]
        self.deleted_objects = [
            f.instance for f in self.deleted_forms if not f.instance._state.adding
        ]
        return links

    def _position_key(self, form: forms.ModelForm) -> tuple:
        """Where a row goes: at the position typed in, ahead of the row already there when
        moved up (or new), behind it when moved down; untouched rows keep their order and
        new rows without a position go last."""
        index = self.forms.index(form)
        typed = form.cleaned_data.get("seq")
        if form.instance._state.adding:
            return (math.inf, 0, index) if typed is None else (typed, -1, index)
        shown = form.initial.get("seq")
        if typed is None or typed == shown:
            return (shown, 0, index)
        return (typed, -1 if typed < shown else 1, index)


class DownloadAssetInline(OrgScopedAdminMixin, admin.TabularInline):
    model = DownloadAsset
    form = DownloadAssetForm
    formset = DownloadAssetFormSet
    fields = ["asset", "seq", "display_name"]
    ordering = ["seq"]
    autocomplete_fields = ["asset"]
    extra = 1
    verbose_name = "asset"
    verbose_name_plural = "assets, in order"


@admin.register(Download)
class DownloadAdmin(OrgScopedAdmin):
    list_display = ["name", "org", "published", "asset_count", "created_at"]
    list_filter = ["org", "published", "created_at"]
    search_fields = ["name", "description"]
    list_select_related = ["org"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [DownloadAssetInline]

    def get_queryset(self, request):
        return (
            super().get_queryset(request).annotate(asset_count=link_count(download=OuterRef("pk")))
        )

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "org"] if obj else self.readonly_fields

    @admin.display(description="assets", ordering="asset_count")
    def asset_count(self, obj: Download) -> int:
        return obj.asset_count

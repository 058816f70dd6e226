"""Abstract models every app builds on. Not an app: only abstract models live here."""

from django.db import models

from lms.ids import uuid7


class BaseModel(models.Model):
    """A UUIDv7 primary key and creation/update timestamps."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class StampField(models.DateTimeField):
    """A creation or update time (``auto_now_add``/``auto_now``), except on a record that
    carries its own: one whose ``keep_timestamps`` attribute is true, as a bulk load of
    existing records sets on each of them. Per record, so no other thread is affected."""

    def deconstruct(self):
        # To migrations it is the DateTimeField it stores as: nothing to alter in any table.
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.DateTimeField", args, kwargs

    def pre_save(self, model_instance, add):
        if getattr(model_instance, "keep_timestamps", False):
            return getattr(model_instance, self.attname)
        return super().pre_save(model_instance, add)

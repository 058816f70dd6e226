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

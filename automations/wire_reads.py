"""Reads on hot paths answering the wire's text: rows whose ids and timestamps the database
writes as the API does (``lms.db.wire``), read through the columns of a shape
(``automations.serializers.AUTOMATION``) and ready for its builder."""

from __future__ import annotations

import uuid

from automations.models import Automation
from automations.serializers import AUTOMATION
from lms.db.compiled import Compiled

_AUTOMATION = Compiled(
    lambda org_id, id: Automation.objects.filter(org_id=org_id, id=id).values_list(
        *AUTOMATION.columns
    ),
    prepare=True,
)


def read_automation(*, org_id: uuid.UUID, automation_id: object) -> tuple:
    """The organization's automation as a row of ``AUTOMATION.columns``, for
    ``AUTOMATION.body`` (one query, its SQL compiled once per process). Malformed, unknown
    or foreign ids: NotFound."""
    return _AUTOMATION.one_or_404(Automation, org_id=org_id, id=automation_id)

"""Error codes of this app beyond the shared hierarchy in ``lms.errors``."""

from lms.errors import Gone


class InviteUnavailable(Gone):
    code = "invite_unavailable"
    default_message = "This invite is no longer available."

"""Error codes of this app beyond the shared hierarchy in ``lms.errors``."""

from lms.errors import Gone

_UNAVAILABLE = {
    "expired": "This invite has expired.",
    "accepted": "This invite has already been accepted.",
    "revoked": "This invite has been revoked.",
}


class InviteUnavailable(Gone):
    code = "invite_unavailable"
    default_message = "This invite is no longer available."

    @classmethod
    def because(cls, status: str) -> "InviteUnavailable":
        """The error for an invite whose status (expired, accepted, revoked) refuses it."""
        return cls(_UNAVAILABLE.get(status))

from django.apps import AppConfig


class OrganizationsConfig(AppConfig):
    name = "organizations"
    verbose_name = "Organizations and access"

    def ready(self) -> None:
        from lms.ops.logs import register_redaction
        from lms.ops.metrics import THROTTLED, start_at_zero
        from lms.schema import describe_error_status
        from organizations import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from organizations.throttling import InviteLookupThrottle

        # An invite's token is its credential and travels in the path: every log line keeps
        # only its display prefix (12 characters, as the admin shows it).
        register_redaction(INVITE_PATH_TOKEN, r"\1...", contains="/invites/")
        describe_error_status("410", "invite_unavailable: accepted, revoked or expired")
        # API tokens never belong in a path or a message; should one get there, likewise.
        register_redaction(r"\b(lms_[A-Za-z0-9_-]{8})[A-Za-z0-9_-]{16,}", r"\1...", contains="lms_")
        start_at_zero(THROTTLED, (InviteLookupThrottle.scope,))


INVITE_PATH_TOKEN = r"(/invites/[^/?#\s\"'\\<>]{0,12})[^/?#\s\"'\\<>]+"

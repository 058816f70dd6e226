"""OpenAPI: every operation documents the contract's error body and the statuses it may send."""

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="Stable snake_case error code.")
    message = serializers.CharField(help_text="One human sentence.")
    requestId = serializers.CharField(help_text="The request's id (also in X-Request-ID).")
    details = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Only on validation_error: each offending field (wire name) to its messages.",
    )

    class Meta:
        ref_name = "Error"


_DESCRIPTIONS = {
    "400": "validation_error or malformed_request",
    "401": "unauthenticated: no token, or an unknown, revoked or expired one",
    "403": "permission_denied (role) or not_enrolled",
    "404": "not_found: unknown route, or no such record in the caller's organization",
    "410": "invite_unavailable",
    "413": "payload_too_large: body over 1 MiB",
    "415": "unsupported_media_type: body is not application/json",
    "429": "throttled (see Retry-After)",
    "500": "internal_error",
    "503": "service_unavailable: the database is unreachable",
}


class ApiAutoSchema(AutoSchema):
    """Adds the error responses the contract says every operation can give.

    A view may list extra error statuses in ``error_statuses`` (e.g. ``("410",)``) and drop
    ones that cannot happen in ``omit_error_statuses``.
    """

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        codes = ["400", "404", "429", "500", "503"]
        if self.view.get_authenticators():
            codes += ["401", "403"]
        if self.method in ("POST", "PUT", "PATCH"):
            codes += ["413", "415"]
        codes += list(getattr(self.view, "error_statuses", ()))
        omit = set(getattr(self.view, "omit_error_statuses", ()))
        for code in sorted(set(codes) - omit):
            if code not in responses:
                response = self._get_response_for_code(ErrorSerializer, code, direction=direction)
                response["description"] = _DESCRIPTIONS[code]
                responses[code] = response
        return responses

    def _get_response_headers_for_code(self, status_code, direction="response"):
        headers = super()._get_response_headers_for_code(status_code, direction)
        headers["X-Request-ID"] = {
            "schema": {"type": "string"},
            "description": "The request's id; a sane incoming X-Request-ID is echoed.",
        }
        if status_code == "429":
            headers["Retry-After"] = {"schema": {"type": "integer"}, "description": "Seconds."}
        if status_code == "401":
            headers["WWW-Authenticate"] = {"schema": {"type": "string"}}
        return headers

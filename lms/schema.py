"""OpenAPI: every operation documents the contract's error body and the statuses it may send."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from lms import errors
from lms.pagination import EnvelopePagination, PagedRows
from lms.web import guide


def _class_of(codes: list[int]) -> str:
    """The inside of a regex character class of ``codes`` (ascending), runs of consecutive
    code points written as ranges, so that the schema's patterns stay short to read."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "".join(
        f"\\u{first:04x}" if first == last else f"\\u{first:04x}-\\u{last:04x}"
        for first, last in runs
    )


# What DRF's CharField strips with ``str.strip()``: every character Python calls whitespace
# (all of them are in the Basic Multilingual Plane).
_SPACE = _class_of([code for code in range(0x10000) if chr(code).isspace()])
_TEXT = "[^\\u0000]"  # DRF refuses NUL in every CharField
_SOLID = f"[^{_SPACE}\\u0000]"


def text_pattern(min_length: int, max_length: int | None, *, blank: bool) -> str:
    """An ECMA/Python regex of exactly the strings a trimming CharField takes: no NUL, and
    min_length..max_length characters once surrounding whitespace is stripped (or nothing
    but whitespace when ``blank``)."""
    min_length = max(min_length, 1)
    alternatives = []
    if min_length == 1 and (max_length is None or max_length >= 1):
        alternatives.append(_SOLID)
    if max_length is None or max_length >= 2:
        upper = "" if max_length is None else str(max_length - 2)
        alternatives.append(f"{_SOLID}{_TEXT}{{{max(min_length, 2) - 2},{upper}}}{_SOLID}")
    core = f"(?:{'|'.join(alternatives)})" + ("?" if blank else "")
    return f"^[{_SPACE}]*{core}[{_SPACE}]*$"


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="Stable snake_case error code.")
    message = serializers.CharField(help_text="One human sentence.")
    requestId = serializers.CharField(help_text="The request's id (also in X-Request-ID).")
    details = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="On validation_error: each offending field (wire name) to its messages; "
        "on a conflict over a field's value (a taken name), that field.",
    )

    class Meta:
        ref_name = "Error"


_DESCRIPTIONS = {
    "400": "validation_error or malformed_request",
    "401": "unauthenticated: no token, or an unknown, revoked or expired one",
    "403": "permission_denied (role) or not_enrolled",
    "404": "not_found: unknown route, or no such record in the caller's organization",
    "409": "conflict: the request meets a state that refuses it (a name already taken, "
    "named in details; or a concurrent change not ordered after retries: retry)",
    "413": "payload_too_large: body over 1 MiB",
    "415": "unsupported_media_type: body is not application/json",
    "429": "throttled (see Retry-After)",
    "500": "internal_error",
    "503": "service_unavailable: the database is unreachable",
}


def query_parameter(name: str, schema: dict) -> OpenApiParameter:
    """An optional query parameter of the JSON ``schema`` that holds its description too (as
    a django-filter field's ``extend_schema_field`` takes it)."""
    rest = {key: value for key, value in schema.items() if key != "description"}
    return OpenApiParameter(
        name, rest, OpenApiParameter.QUERY, description=schema.get("description", "")
    )


def describe_error_status(code: str, description: str) -> None:
    """An app's own error status (e.g. its 410), for the operations that list it in
    ``error_statuses``; called from the app's ``AppConfig.ready``."""
    _DESCRIPTIONS[code] = description


class ApiAutoSchema(AutoSchema):
    """Adds the error responses the contract says every operation can give.

    A view may list extra error statuses in ``error_statuses`` (e.g. ``("410",)``) and drop
    ones that cannot happen in ``omit_error_statuses``.

    A CharField of a request also gets a ``pattern`` stating what DRF really takes (no NUL;
    with trimming, its length bounds apply to the stripped text and a blank-refusing field
    refuses whitespace alone), so the schema neither promises more nor less than the server.
    """

    _direction = "response"

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        # _insert_field_validators, called right after for the same field, is not told the
        # direction; nested fields resolve in the direction of their parent.
        self._direction = direction
        return super()._map_serializer_field(field, direction, bypass_extensions)

    def _insert_field_validators(self, field, schema):
        super()._insert_field_validators(field, schema)
        if (
            self._direction != "request"
            or not isinstance(field, serializers.CharField)
            or schema.get("type") != "string"
            or {"pattern", "format", "enum"} & set(schema)
        ):
            return
        if not field.trim_whitespace:
            schema["pattern"] = f"^{_TEXT}*$"
            return
        min_length = schema.pop("minLength", 1)
        max_length = schema.pop("maxLength", None)
        schema["pattern"] = text_pattern(min_length, max_length, blank=field.allow_blank)
        bounds = f"at most {max_length} characters" if max_length is not None else ""
        if min_length > 1:
            bounds = f"at least {min_length}" + (f" and {bounds}" if bounds else " characters")
        if bounds:
            note = f"{bounds[0].upper()}{bounds[1:]} once surrounding whitespace is stripped."
            schema["description"] = f"{schema.get('description', '')} {note}".strip()

    def _get_paginator(self):
        """``EnvelopePagination`` for a list whose view declares its rows ``paged``."""
        responses = self.get_response_serializers()
        if isinstance(responses, dict):
            responses = responses.get(200, responses.get("200"))
        if isinstance(responses, PagedRows):
            return EnvelopePagination()
        return super()._get_paginator()

    def _get_request_for_media_type(self, serializer, direction="request"):
        # A body of shapes (``oneOf``/``anyOf`` of components, one per kind of body) is
        # required when each shape requires a field, as a plain object's is when it does.
        schema, required = super()._get_request_for_media_type(serializer, direction)
        body = self._component(schema)
        shapes = body.get("oneOf") or body.get("anyOf")
        if not required and shapes:
            required = all(self._component(shape).get("required") for shape in shapes)
        return schema, required

    def _component(self, schema) -> dict:
        """The schema of the component ``schema`` refers to ({} for any other schema)."""
        if not isinstance(schema, dict) or "$ref" not in schema:
            return {}
        name = schema["$ref"].rsplit("/", 1)[1]
        return self.registry[(name, ResolvedComponent.SCHEMA)].schema or {}

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        codes = ["400", "404", "429", "500", "503"]
        if self.view.get_authenticators():
            codes += ["401", "403"]
        if self.method in ("POST", "PUT", "PATCH"):
            codes += ["415"]
        if self.method in ("POST", "PUT", "PATCH", "DELETE"):
            # The size limit applies to any body, even one a DELETE should not carry.
            codes += ["413"]
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


# Each operation's section of the API guide (lms.web.guide's anchors): its description links
# there, not to the guide's top.
GUIDE_SECTIONS = {
    "list_download_assets": "a-downloads-links",
    "link_download_asset": "link-an-asset",
    "unlink_download_asset": "unlink-an-asset",
    "list_my_courses": "your-courses",
    "read_course_outline": "a-courses-outline",
    "list_course_activities": "list-a-courses-activities",
    "report_progress": "report-progress",
    "read_course_progress": "your-progress-on-a-course",
    "list_course_enrollments": "a-courses-roster",
    "read_course_report": "a-courses-report",
    "enroll_members": "enrol-members",
    "unenroll_member": "unenrol-a-member",
    "list_members": "members",
    "list_bundles": "bundles",
    "read_invite": "organization-invites",
    "accept_invite": "accept-an-invite",
    "list_automations": "manage-automations",
    "create_automation": "manage-automations",
    "read_automation": "manage-automations",
    "update_automation": "manage-automations",
    "delete_automation": "manage-automations",
    "list_automation_runs": "manage-automations",
    "rotate_automation_secret": "roll-a-signing-secret",
    "test_automation": "send-a-test",
    "retry_automation_run": "retry-a-failed-run",
    "list_completions": "the-completions-feed",
    "create_invite": "invite",
    "list_invites": "list-invites",
    "revoke_invite": "revoke",
    "mint_member_token": "mint-a-members-token",
    "sign_out": "sign-out",
}
_GUIDE_LINK = f"]({guide.URL})"


def type_error_codes(result, generator, request, public):
    """drf-spectacular's post-processing hook: ``Error.error`` is an enum of every code
    (``lms.errors.codes()``), so a client can switch over them."""
    error = result.get("components", {}).get("schemas", {}).get("Error")
    if error is not None:
        error["properties"]["error"]["enum"] = errors.codes()
    return result


def name_shared_schemas(result, generator, request, public):
    """drf-spectacular's post-processing hook: a schema declared once for several fields
    (``SHARED_SCHEMAS``: name to schema, an app's) is one component of that name, each field
    referring to it, instead of a copy per field that generators name after the field."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})

    def replace(node):
        if isinstance(node, dict):
            for key, value in list(node.items()):
                name = _shared_name(value)
                if name is not None:
                    schemas[name] = SHARED_SCHEMAS[name]
                    rest = {k: v for k, v in value.items() if k not in SHARED_SCHEMAS[name]}
                    node[key] = {"allOf": [{"$ref": f"#/components/schemas/{name}"}], **rest}
                else:
                    replace(value)
        elif isinstance(node, list):
            for item in node:
                replace(item)

    replace(result.get("paths", {}))
    replace(schemas)
    return result


# Schemas declared once and named (an app registers its own from its serializers' module).
SHARED_SCHEMAS: dict[str, dict] = {}


def _shared_name(node) -> str | None:
    if not isinstance(node, dict):
        return None
    for name, schema in SHARED_SCHEMAS.items():
        if all(node.get(key) == value for key, value in schema.items()):
            return name
    return None


def link_guide_sections(result, generator, request, public):
    """drf-spectacular's post-processing hook: an operation's link to the API guide lands on
    its own section (GUIDE_SECTIONS), and one that has no link gets one."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            anchor = GUIDE_SECTIONS.get(operation.get("operationId"))
            if anchor is None:
                continue
            text = operation.get("description", "")
            target = f"]({guide.link(anchor)})"
            if _GUIDE_LINK in text:
                operation["description"] = text.replace(_GUIDE_LINK, target)
            else:
                operation["description"] = f"{text} See the [API guide{target}.".strip()
    return result

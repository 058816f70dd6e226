"""Errors of the learning area, raised by its services and selectors."""

from lms.errors import ApiError


class NotEnrolled(ApiError):
    status, code = 403, "not_enrolled"
    default_message = "You are not enrolled in this course."

"""Options the identity commands share, read into values or a CommandError."""

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.core.validators import validate_email

from organizations.models import Organization, User
from organizations.selectors import find_organization

ORG_HELP = "The organization's id, or its exact name."


def email_option(value: str) -> str:
    """The e-mail address given, trimmed and lower-cased."""
    email = value.strip().lower()
    longest = User._meta.get_field("email").max_length
    if len(email) > longest:
        raise CommandError(f"The e-mail address is longer than {longest} characters.")
    try:
        validate_email(email)
    except ValidationError:
        raise CommandError(f"{value!r} is not an e-mail address.") from None
    return email


def org_option(value: str) -> Organization:
    """The organization named by its id or its exact name."""
    try:
        return find_organization(value)
    except LookupError as exc:
        raise CommandError(str(exc)) from None

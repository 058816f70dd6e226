"""What other apps may use of identity: the tenant and its members, the API's role checks,
and the options with which a command names an organization or a person.

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from organizations.management.options import ORG_HELP, org_option
from organizations.models import IdempotencyRecord, Membership, Organization
from organizations.permissions import IsMember, IsOrgAdmin, IsStaffRole
from organizations.selectors import invite_course_ids, member_ids, member_ids_by_email
from organizations.throttling import take_slot

__all__ = [
    "ORG_HELP",
    "IdempotencyRecord",
    "IsMember",
    "IsOrgAdmin",
    "IsStaffRole",
    "Membership",
    "Organization",
    "invite_course_ids",
    "member_ids",
    "member_ids_by_email",
    "org_option",
    "take_slot",
]

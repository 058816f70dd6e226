"""What other apps may use of learning: courses and activities (an automation aims at them)
and the one enrolment service (an automation's action, an invite's accept).

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from learn.models import Activity, Course
from learn.services import UNSET, Enrolled, UnknownMembers, enroll, enroll_members, unenroll

__all__ = [
    "UNSET",
    "Activity",
    "Course",
    "Enrolled",
    "UnknownMembers",
    "enroll",
    "enroll_members",
    "unenroll",
]

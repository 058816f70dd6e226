"""What other apps may use of learning: courses and activities (an automation aims at them,
a bundle and an invite point at courses) and the enrolment of members with what it refuses
(an automation's action).

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from learn.models import Activity, Course
from learn.services import UnknownMembers, enroll_members

__all__ = ["Activity", "Course", "UnknownMembers", "enroll_members"]

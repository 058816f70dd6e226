"""What other apps may use of learning: courses and activities (an automation aims at them)
and enrolling a member (an automation's action).

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from learn.models import Activity, Course
from learn.services import enroll

__all__ = ["Activity", "Course", "enroll"]

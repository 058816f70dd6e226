"""What other apps may use of automations: the model, and saving one through the same
validation as the API and the admin.

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from automations.models import Automation
from automations.services import save_automation

__all__ = ["Automation", "save_automation"]

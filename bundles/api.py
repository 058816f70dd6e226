"""What other apps may use of bundles: the model, and the bulk insert that keeps the
organization's tally.

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from bundles.models import Bundle
from bundles.services import NewBundle, insert_bundles

__all__ = ["Bundle", "NewBundle", "insert_bundles"]

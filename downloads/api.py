"""What other apps may use of downloads: the download, which a bundle points at (by its app
label).

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

from downloads.models import Download

__all__ = ["Download"]

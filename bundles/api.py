"""What other apps may use of bundles: nothing yet. No app builds on bundles (the table of
docs/architecture.md); what an app needs of it is added here, and only here.

Another app imports this module only, never the app's other modules
(``tests/lms/test_layers.py``): what is not here is the app's own, free to change.
"""

__all__: list[str] = []

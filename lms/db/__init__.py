"""The database machinery of the hot paths, in one place.

Reads compiled once per process (``compiled``), writes written out from the model's own
fields (``statements``), ids and timestamps read as wire text (``wire``), JSON list
containment (``jsonsql``), a sliding window's count in one statement (``windows``: the
invite throttle's), the readiness probe's ``SELECT 1`` (``health``), the read replica's
router (``replica``) and the migrations' own operations (``migration_operations``). No
module outside this package writes SQL (``tests/lms/test_layers.py``); apps call these
helpers with their models.
"""

"""The database machinery of the hot paths, in one place.

Reads compiled once per process (``compiled``), writes written out from the model's own
fields (``statements``), ids and timestamps read as wire text (``wire``), JSON list
containment (``jsonsql``), the read replica's router (``replica``) and the migrations' own
operations (``migration_operations``). No module outside this package writes SQL
(``tests/lms/test_layers.py``); apps call these helpers with their models.
"""

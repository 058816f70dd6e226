"""Our server in the load bench: the service's own settings, with bench/urls.py (the
production URLconf plus the textbook baseline's routes under /textbook/). Never used in
production."""

from lms.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"

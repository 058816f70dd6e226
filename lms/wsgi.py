"""The WSGI application (gunicorn's ``lms.wsgi:application``)."""

import os

import django
from django.core.handlers.wsgi import WSGIHandler
from django.urls import get_resolver

from lms.http import Request

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lms.settings")


class Handler(WSGIHandler):
    request_class = Request


def get_application() -> Handler:
    django.setup(set_prefix=False)
    handler = Handler()
    # The URLconf and every view it names are imported now, not by the first request: in
    # gunicorn's master (preload_app), so that each forked worker starts with them.
    get_resolver().url_patterns  # noqa: B018
    return handler


application = get_application()

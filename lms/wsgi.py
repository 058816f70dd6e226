"""The WSGI application (gunicorn's ``lms.wsgi:application``)."""

import os

import django
from django.core.handlers.wsgi import WSGIHandler

from lms.http import Request

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lms.settings")


class Handler(WSGIHandler):
    request_class = Request


def get_application() -> Handler:
    django.setup(set_prefix=False)
    return Handler()


application = get_application()

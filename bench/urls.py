"""The production URLconf plus /bench/ceiling: a bare Django view with a constant JSON body,
served through the same middleware and server settings, to measure the ceiling of the stack."""

from django.http import JsonResponse
from django.urls import path

from lms.urls import handler400, handler403, handler404, handler500
from lms.urls import urlpatterns as lms_urls

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]

_BODY = {"status": "ok", "ceiling": True}


def ceiling(request):
    return JsonResponse(_BODY)


urlpatterns = [path("bench/ceiling", ceiling), *lms_urls]

"""Health endpoints: plain Django views, no authentication, no database for /healthz."""

from django.db import connection
from django.http import JsonResponse

from lms import errors


def healthz(request):
    """The process is up and answering."""
    return JsonResponse({"status": "ok"})


def readyz(request):
    """The process can reach its database."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any failure to reach the database means "not ready"
        # One line each probe, not a traceback: a load balancer probes every few seconds for
        # as long as the database is down, and the reason is all there is to read.
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        errors.logger.warning("readiness check failed: %s", reason[:500])
        return errors.error_response(errors.ServiceUnavailable("The database is unreachable."))
    return JsonResponse({"status": "ok", "database": "ok"})

"""Health endpoints and the API guide: plain Django views, no authentication, no database
for /healthz and the guide."""

from functools import wraps

from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from lms import errors
from lms.db.health import ping
from lms.web import guide


def probe(view):
    """A probe, and the guide, answer GET and HEAD, and 405 to any other method (CONTRACT
    7.0). Exempt from the CSRF check, which would answer 403 and log a warning for each such
    request (and which a request under /api/ does not pass: lms.web.chains)."""

    @csrf_exempt
    @wraps(view)
    def answer(request):
        if request.method not in ("GET", "HEAD"):
            return errors.error_response(errors.MethodNotAllowed(), Allow="GET, HEAD")
        return view(request)

    return answer


@probe
def healthz(request):
    """The process is up and answering."""
    return JsonResponse({"status": "ok"})


@probe
def readyz(request):
    """The process can reach its database."""
    try:
        ping()
    except Exception as exc:  # any failure to reach the database means "not ready"
        # One line each probe, not a traceback: a load balancer probes every few seconds for
        # as long as the database is down, and the reason is all there is to read.
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        errors.logger.warning("readiness check failed: %s", reason[:500])
        return errors.error_response(errors.ServiceUnavailable("The database is unreachable."))
    return JsonResponse({"status": "ok", "database": "ok"})


@probe
def api_guide(request):
    """The API guide as an HTML page with its contents and an anchor on each section, where
    the schema's descriptions and the Swagger UI link to it."""
    text = guide.page()
    if text is None:
        return errors.error_response(errors.NotFound("The API guide is not installed here."))
    return HttpResponse(text, content_type="text/html; charset=utf-8")

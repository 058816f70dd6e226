"""GET /metrics (README "Metrics"): the Prometheus text format for the bearer of
LMS_METRICS_TOKEN, an unknown route to anyone else; what is counted, by which labels. (Summed
across gunicorn's workers: test_metrics_processes.py.)"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from automations import runs
from automations.models import AutomationRun
from automations.registry import TRIGGER_NAMES
from tests.automations.factories import AutomationFactory, make_run, welcome_email
from tests.helpers import assert_error
from tests.organizations.factories import make_invite

pytestmark = pytest.mark.django_db

TOKEN = "metrics-token-for-tests"


@pytest.fixture
def metrics_on(settings):
    settings.LMS_METRICS_TOKEN = TOKEN


def scrape(api) -> dict[tuple, float]:
    """Every sample of one scrape: (name, sorted labels) -> value."""
    response = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def requests(samples: dict, route: str, method: str = "GET", status: int = 200) -> float:
    labels = (("method", method), ("route", route), ("status", str(status)))
    return samples.get(("lms_requests_total", labels), 0)


def test_without_a_configured_token_metrics_is_an_unknown_route(api, settings):
    settings.LMS_METRICS_TOKEN = ""
    unknown = assert_error(api.get("/no-such-route"), 404, "not_found")
    for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": f"Bearer {TOKEN}"}):
        body = assert_error(api.get("/metrics", headers=headers), 404, "not_found")
        assert body["message"] == unknown["message"]


@pytest.mark.parametrize(
    "authorization",
    [None, "", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", TOKEN, f"Basic {TOKEN}", "Bearer"],
)
def test_a_missing_or_wrong_token_is_answered_as_an_unknown_route(api, metrics_on, authorization):
    headers = {} if authorization is None else {"Authorization": authorization}
    assert_error(api.get("/metrics", headers=headers), 404, "not_found")


def test_other_methods_are_refused_with_the_token(api, metrics_on):
    response = api.post("/metrics", {}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert_error(response, 405, "method_not_allowed")
    assert response["Allow"] == "GET, HEAD"


def test_requests_are_counted_by_route_pattern_method_and_status(api, metrics_on, learner):
    before = scrape(api)
    for _ in range(2):
        assert api.get("/api/bundles", token=learner.token).status_code == 200
    record = uuid.uuid4()
    assert api.get(f"/api/automations/{record}", token=learner.token).status_code in (403, 404)
    assert api.get(f"/api/organizations/invites/inv_secret{record.hex}").status_code == 404
    assert api.get(f"/no/such/{record}").status_code == 404
    assert api.request("BREW", "/api/bundles", token=learner.token).status_code == 405
    after = scrape(api)

    assert requests(after, "/api/bundles") - requests(before, "/api/bundles") == 2
    assert (
        requests(after, "/api/organizations/invites/<path:token>", status=404)
        - requests(before, "/api/organizations/invites/<path:token>", status=404)
        == 1
    )
    assert requests(after, "unmatched", status=404) - requests(before, "unmatched", status=404) == 1
    assert (
        requests(after, "/api/bundles", "other", 405)
        - requests(before, "/api/bundles", "other", 405)
        == 1
    )
    assert requests(after, "/metrics") - requests(before, "/metrics") == 1  # the first scrape
    # Never a raw path: no id, no token in any label.
    labels = " ".join(str(key) for key in after)
    assert str(record) not in labels and record.hex not in labels


def test_durations_are_a_histogram_by_route(api, metrics_on, learner):
    name = "lms_request_duration_seconds"
    route = (("route", "/api/bundles"),)
    before = scrape(api)
    for _ in range(3):
        api.get("/api/bundles", token=learner.token)
    after = scrape(api)
    count = after[(f"{name}_count", route)] - before.get((f"{name}_count", route), 0)
    assert count == 3
    assert after[(f"{name}_sum", route)] > before.get((f"{name}_sum", route), 0)
    buckets = {
        dict(labels)["le"]: value
        for (sample, labels), value in after.items()
        if sample == f"{name}_bucket" and dict(labels)["route"] == "/api/bundles"
    }
    assert {"0.001", "0.01", "0.1", "1.0", "10.0", "+Inf"} <= set(buckets)
    assert buckets["+Inf"] == after[(f"{name}_count", route)]


def test_nothing_is_counted_without_a_token(api, settings, learner):
    settings.LMS_METRICS_TOKEN = TOKEN
    before = requests(scrape(api), "/api/bundles")
    settings.LMS_METRICS_TOKEN = ""
    assert api.get("/api/bundles", token=learner.token).status_code == 200
    settings.LMS_METRICS_TOKEN = TOKEN
    assert requests(scrape(api), "/api/bundles") == before


def test_the_throttles_refusals_are_counted(api, metrics_on, org, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"invite_lookup": "2/min"},
    }
    _, token = make_invite(org)
    key = ("lms_throttled_requests_total", (("scope", "invite_lookup"),))
    before = scrape(api).get(key, 0)
    statuses = [api.get(f"/api/organizations/invites/{token}").status_code for _ in range(4)]
    assert statuses == [200, 200, 429, 429]
    assert scrape(api)[key] - before == 2


def test_the_replicas_skips_are_counted_by_reason(api, metrics_on):
    from lms.db import replica

    key = ("lms_replica_skips_total", (("reason", "lagging"),))
    before = scrape(api).get(key, 0)
    replica._skip("lagging")
    replica._skip("lagging")
    assert scrape(api)[key] - before == 2


def _run(org, actions, *, due_at=None, status=AutomationRun.Status.PENDING) -> AutomationRun:
    automation = AutomationFactory(org=org, trigger="enrollment.created", actions=actions)
    return make_run(automation, due_at=due_at or timezone.now(), status=status)


def test_finished_automation_runs_are_counted_by_trigger_and_status(api, metrics_on, org, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.LMS_AUTOMATION_ATTEMPTS = 1
    name = "lms_automation_runs_total"
    succeeded = (name, (("status", "succeeded"), ("trigger", "enrollment.created")))
    failed = (name, (("status", "failed"), ("trigger", "enrollment.created")))
    before = scrape(api)
    runs.execute(_run(org, [welcome_email()]).id)
    runs.execute(_run(org, [welcome_email()]).id)
    runs.execute(_run(org, [{"type": "webhook", "input": {"url": "http://127.0.0.1:9/"}}]).id)
    after = scrape(api)
    assert after[succeeded] - before.get(succeeded, 0) == 2
    assert after[failed] - before.get(failed, 0) == 1


def test_the_oldest_due_runs_age_is_read_at_scrape_time(api, metrics_on, org, other_org):
    key = ("lms_automation_oldest_pending_seconds", ())
    assert scrape(api)[key] == 0
    now = timezone.now()
    # Held by a worker whose lease runs on, or waiting for its next attempt: not late.
    _run(org, [welcome_email()], due_at=now + timedelta(seconds=50), status="running")
    _run(org, [welcome_email()], due_at=now + timedelta(seconds=50))
    _run(org, [welcome_email()], due_at=now - timedelta(seconds=600), status="succeeded")
    assert scrape(api)[key] == 0
    _run(other_org, [welcome_email()], due_at=now - timedelta(seconds=30))
    _run(org, [welcome_email()], due_at=now - timedelta(seconds=120), status="running")
    assert 120 <= scrape(api)[key] < 180


def test_static_files_are_counted_under_one_route(api, metrics_on, settings):
    settings.WHITENOISE_USE_FINDERS = True  # tests do not collect the static files
    before = scrape(api)
    assert api.get("/static/admin/css/base.css").status_code == 200
    assert api.get("/static/admin/js/core.js").status_code == 200
    after = scrape(api)
    assert requests(after, "/static/") - requests(before, "/static/") == 2
    assert not any("base.css" in str(key) for key in after)


def test_the_series_memory_is_keyed_by_labels_so_it_stays_bounded(api, metrics_on, settings):
    """Every request is remembered under its labels, not its raw method or path: methods
    no one knows share "other", and a missing static file is counted under the static
    route even when an unmatched path with the same status came first."""
    from lms.ops import metrics

    settings.WHITENOISE_USE_FINDERS = True
    metrics._request_series.clear()
    before = scrape(api)
    assert api.get("/no/such/page").status_code == 404
    assert api.get("/static/admin/css/no-such-file.css").status_code == 404
    for method in ("BREW", "WHEN", "PURGE"):
        assert api.request(method, "/no/such/page").status_code in (404, 405)
    after = scrape(api)
    assert requests(after, "unmatched", status=404) - requests(before, "unmatched", status=404) == 1
    assert requests(after, "/static/", status=404) - requests(before, "/static/", status=404) == 1
    assert {method for _, method, _ in metrics._request_series} <= {"GET", "other"}
    assert len([key for key in metrics._request_series if key[1] == "other"]) == 1


def test_every_series_of_known_labels_is_there_from_the_start(api, metrics_on):
    samples = scrape(api)
    for trigger in TRIGGER_NAMES:
        for status in ("succeeded", "failed"):
            labels = (("status", status), ("trigger", trigger))
            assert ("lms_automation_runs_total", labels) in samples
    assert ("lms_throttled_requests_total", (("scope", "invite_lookup"),)) in samples
    for reason in ("down", "lagging", "failed"):
        assert ("lms_replica_skips_total", (("reason", reason),)) in samples


def test_an_https_redirect_is_counted_under_its_route(api, metrics_on, settings):
    settings.SECURE_SSL_REDIRECT = True
    before = scrape(api)
    assert api.get("/api/bundles").status_code == 301
    assert api.get("/no-such-route").status_code == 301
    after = scrape(api)  # /metrics is exempt from the redirect
    for route in ("/api/bundles", "unmatched"):
        assert requests(after, route, status=301) == requests(before, route, status=301) + 1


def test_the_process_series_are_answered(api, metrics_on):
    samples = scrape(api)
    assert samples[("process_resident_memory_bytes", ())] > 0
    assert ("python_gc_collections_total", (("generation", "0"),)) in samples

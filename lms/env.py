"""Switches read from the environment, for the settings and for gunicorn.conf.py (which
cannot import the settings module: it has side effects)."""

import os

from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), not {value!r}.")


def metrics_dir() -> str:
    """The folder where every process of one machine that counts (gunicorn's workers, the
    task workers) keeps its metrics for a scrape to sum (prometheus-client's multiprocess
    mode): ``PROMETHEUS_MULTIPROC_DIR``, else ``metrics`` under ``LMS_VAR_DIR``. Created,
    and exported as ``PROMETHEUS_MULTIPROC_DIR``, which prometheus-client reads when it is
    first imported: call this before."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.path.join(
        os.environ.get("LMS_VAR_DIR") or os.path.join(os.path.dirname(__file__), "..", "var"),
        "metrics",
    )
    folder = os.path.abspath(folder)
    os.makedirs(folder, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    return folder

"""One settings module; every knob comes from the environment (see README)."""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from lms.env import env_bool, metrics_dir

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("LMS_VAR_DIR", BASE_DIR / "var"))


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("LMS_DEBUG", False)
SECRET_KEY = os.environ.get("LMS_SECRET_KEY", "")
if not SECRET_KEY:
    if env_bool("LMS_HTTPS", False):
        raise ImproperlyConfigured("LMS_SECRET_KEY must be set in production (LMS_HTTPS=true).")
    # A development key: fine for a laptop, refused by `check --deploy`.
    SECRET_KEY = "django-insecure-development-key-set-LMS_SECRET_KEY-in-production"

ALLOWED_HOSTS = env_list("LMS_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("LMS_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "nested_admin",
    "organizations",
    "downloads",
    "learn",
    "bundles",
    "automations",
    "axes",
    "corsheaders",
    "django_tasks",
    "django_tasks_db",
]

MIDDLEWARE = [
    "lms.web.middleware.RequestIdMiddleware",
    # Before anything that authenticates or refuses: a preflight needs no token (lms/web/cors.py).
    "lms.web.cors.CorsMiddleware",
    "lms.web.middleware.JsonErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # The admin's: our subclasses of Django's skip requests under /api/ (no cookie sessions).
    "lms.web.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "lms.web.middleware.AuthenticationMiddleware",
    "lms.web.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: answers a locked-out admin sign-in.
    "axes.middleware.AxesMiddleware",
]
# The admin's middleware, which a request under /api/ does not pass (lms.web.chains;
# LMS_API_CHAIN=false: every request passes all of MIDDLEWARE). The API takes no cookie, so
# no session, user, message or CSRF token, serves no static file and has no sign-in to lock.
LMS_API_CHAIN = env_bool("LMS_API_CHAIN", True)
LMS_OUTSIDE_API_MIDDLEWARE = [
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "lms.web.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "lms.web.middleware.AuthenticationMiddleware",
    "lms.web.middleware.MessageMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "lms.urls"
WSGI_APPLICATION = "lms.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------
VAR_DIR.mkdir(parents=True, exist_ok=True)
DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
_db = dj_database_url.parse(DATABASE_URL)
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default must survive concurrent writers too: WAL, a busy timeout and
    # BEGIN IMMEDIATE so that a writer waits for the lock instead of failing mid-transaction.
    _db["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    _db["TEST"] = {"NAME": os.environ.get("LMS_SQLITE_TEST_NAME") or None}
    # The file holds signing secrets and webhook credentials: its owner's only, made so
    # before SQLite first opens it (SQLite gives its -wal and -shm files the same mode).
    if _db["NAME"] != ":memory:" and Path(_db["NAME"]).parent.is_dir():
        os.close(os.open(_db["NAME"], os.O_CREAT | os.O_RDWR, 0o600))
        os.chmod(_db["NAME"], 0o600)
elif _db["ENGINE"] == "django.db.backends.postgresql":
    # Each server thread keeps its connection between requests (LMS_CONN_MAX_AGE seconds)
    # and checks it only after an error: a connection the database cut costs that thread
    # one 503, as a pooled one did. The pool (LMS_DB_POOL) handed a connection back and took
    # it again on every request, a measurable share of a small read; health checks
    # (LMS_CONN_HEALTH_CHECKS) send a SELECT 1 before each request's first query.
    # docs/performance.md measures both.
    if env_bool("LMS_DB_POOL", False):
        _db["CONN_MAX_AGE"] = 0
        _db["OPTIONS"] = {
            "pool": {
                "min_size": int(os.environ.get("LMS_DB_POOL_MIN", "2")),
                "max_size": int(os.environ.get("LMS_DB_POOL_MAX", "8")),
                # While the database is down a request waits this long for a connection
                # before its 503: short, so clients and load balancers learn it quickly.
                "timeout": float(os.environ.get("LMS_DB_POOL_TIMEOUT", "2")),
            },
            "connect_timeout": 2,
        }
    else:
        _db["CONN_MAX_AGE"] = int(os.environ.get("LMS_CONN_MAX_AGE", "60"))
        _db["CONN_HEALTH_CHECKS"] = env_bool("LMS_CONN_HEALTH_CHECKS", False)
        _db["OPTIONS"] = {"connect_timeout": 2}
    # Every statement's values are bound on the server, so that a statement the database
    # refuses is logged without them (no credential or secret in the log); Django's own
    # statements are never prepared (lms.db.cursors).
    from lms.db.cursors import BindingCursor

    _db["OPTIONS"].update(server_side_binding=True, cursor_factory=BindingCursor)
    # The hot reads and writes (``lms.db.compiled``'s ``prepare=True`` and
    # ``preparing_cursor``) are prepared statements on each connection.
    # LMS_DB_PREPARE=false turns them off, for a pooler in transaction mode (PgBouncer
    # before 1.21) that cannot keep a statement with its connection.
    if env_bool("LMS_DB_PREPARE", True):
        _db["OPTIONS"]["prepare_threshold"] = 5
    # The planner's price of reading a page out of order (PostgreSQL's random_page_cost),
    # sent with the connection's start (no statement of its own): its default, 4, prices a
    # spinning disk, and at that price a large course's roster and its counts are read by
    # scanning and sorting the whole table instead of from the sort's index
    # (docs/performance.md). LMS_DB_RANDOM_PAGE_COST="" keeps the server's (for a pooler
    # that refuses start-up options, or a server tuned already).
    _page_cost = os.environ.get("LMS_DB_RANDOM_PAGE_COST", "1.1")
    if _page_cost:
        try:
            _page_cost = str(float(_page_cost))
        except ValueError:
            raise ImproperlyConfigured(
                f"LMS_DB_RANDOM_PAGE_COST must be a number or empty, not {_page_cost!r}."
            ) from None
        _db["OPTIONS"]["options"] = f"-c random_page_cost={_page_cost}"
DATABASES = {"default": _db}
# A PostgreSQL standby for the API's reads (lms.db.replica; README "Read replica"): the
# "replica" alias, its router, and the middleware that pins a caller who wrote.
LMS_DATABASE_REPLICA_URL = os.environ.get("LMS_DATABASE_REPLICA_URL", "")
LMS_REPLICA_PIN_SECONDS = int(os.environ.get("LMS_REPLICA_PIN_SECONDS", "5"))
LMS_REPLICA_MAX_LAG_SECONDS = float(os.environ.get("LMS_REPLICA_MAX_LAG_SECONDS", "2"))
LMS_REPLICA_CHECK_SECONDS = float(os.environ.get("LMS_REPLICA_CHECK_SECONDS", "1"))
LMS_REPLICA_DEBUG_HEADER = env_bool("LMS_REPLICA_DEBUG_HEADER", False)
if LMS_DATABASE_REPLICA_URL:
    _replica = dj_database_url.parse(LMS_DATABASE_REPLICA_URL)
    if {_db["ENGINE"], _replica["ENGINE"]} != {"django.db.backends.postgresql"}:
        raise ImproperlyConfigured("LMS_DATABASE_REPLICA_URL needs PostgreSQL for both databases.")
    if LMS_REPLICA_MAX_LAG_SECONDS + LMS_REPLICA_CHECK_SECONDS > LMS_REPLICA_PIN_SECONDS:
        raise ImproperlyConfigured(
            "LMS_REPLICA_MAX_LAG_SECONDS + LMS_REPLICA_CHECK_SECONDS must not exceed "
            "LMS_REPLICA_PIN_SECONDS, or a caller could miss their own write."
        )
    # The primary's connection settings; a down replica is given up on sooner.
    _replica.update({key: _db[key] for key in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS") if key in _db})  # type: ignore[typeddict-item]
    _replica["OPTIONS"] = {**_db["OPTIONS"], "connect_timeout": 1}
    if "pool" in _replica["OPTIONS"]:
        _replica["OPTIONS"]["pool"] = dict(_replica["OPTIONS"]["pool"])
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES["replica"] = _replica
    DATABASE_ROUTERS = ["lms.db.replica.ReplicaRouter"]
    MIDDLEWARE.insert(
        MIDDLEWARE.index("lms.web.middleware.JsonErrorMiddleware") + 1,
        "lms.db.replica.ReplicaMiddleware",
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Caches -----------------------------------------------------------------------------
# "shared" holds state every server process must see (the invite-lookup throttle):
# Redis when REDIS_URL is set, else a table in the database that all workers share.
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    _shared_cache = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
    }
else:
    _shared_cache = {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "lms_shared_cache",
    }
CACHES = {
    "default": dict(_shared_cache)
    if REDIS_URL
    else {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    },
    "shared": _shared_cache,
}

AUTH_USER_MODEL = "organizations.User"
# The tenant every tenant-owned record points at, and who administers which (the identity
# app's to say; the core knows no feature).
LMS_TENANT_MODEL = "organizations.Organization"
# How long a process may answer from its own memory of a bearer token before looking it up
# again: the bound on how late another process sees a revocation. 0 turns it off.
LMS_TOKEN_CACHE_SECONDS = float(os.environ.get("LMS_TOKEN_CACHE_SECONDS", "1"))
# Each database connection keeps one prepared cursor for the compiled reads
# (lms.db.compiled.kept_cursor) instead of one per read; false makes a cursor per read.
LMS_DB_KEEP_CURSOR = env_bool("LMS_DB_KEEP_CURSOR", True)
LMS_ADMINISTERED_ORGS = "organizations.selectors.administered_orgs"
# The accept link an invite's e-mail carries, "{token}" standing for the invite's token
# (CONTRACT 9.2); without it, no invite is e-mailed.
LMS_INVITE_URL = os.environ.get("LMS_INVITE_URL", "")
if LMS_INVITE_URL and "{token}" not in LMS_INVITE_URL:
    raise ImproperlyConfigured("LMS_INVITE_URL must hold {token}, where the invite's token goes.")
# Admin sign-in (API calls use tokens, not passwords): django-axes counts failures per
# address and e-mail together and locks that pair out for a while; a success resets it.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("LMS_ADMIN_SIGNIN_FAILURES", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LMS_ADMIN_LOCKOUT_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_USERNAME_FORM_FIELD = "username"
# The client address as the throttles see it: behind LMS_NUM_PROXIES trusted proxies, from
# X-Forwarded-For.
AXES_IPWARE_PROXY_COUNT = int(os.environ.get("LMS_NUM_PROXIES") or 0) or None
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"] if AXES_IPWARE_PROXY_COUNT else ["REMOTE_ADDR"]
)
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("LMS_STATIC_ROOT", VAR_DIR / "static"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
MEDIA_ROOT = VAR_DIR / "media"
# What the last `manage.py seed_demo` issued (ids, tokens, passwords), mode 0600; read again
# without issuing anything by `manage.py demo_manifest` (`make serve`).
LMS_DEMO_MANIFEST = VAR_DIR / "demo.json"

# --- Request limits ---------------------------------------------------------------------
MAX_REQUEST_BODY_BYTES = 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES

# --- Security ----------------------------------------------------------------------------
# LMS_HTTPS=true is the production switch (behind a TLS-terminating proxy): HTTPS redirect,
# secure cookies and HSTS. With it and LMS_SECRET_KEY set, `manage.py check --deploy` is clean.
HTTPS = env_bool("LMS_HTTPS", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SESSION_COOKIE_SECURE = HTTPS
# The admin's messages are kept in the session (on the server), never in a cookie: some show
# a secret once (a rolled signing secret, a new API token, an invite's token), and a cookie
# is signed, not encrypted, so a proxy's log or a HAR file would keep it.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = int(os.environ.get("LMS_HSTS_SECONDS", "31536000")) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# --- API --------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["organizations.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["organizations.permissions.IsMember"],
    "DEFAULT_PARSER_CLASSES": ["lms.web.parsers.JsonObjectParser"],
    "DEFAULT_RENDERER_CLASSES": ["lms.web.renderers.OrjsonRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "lms.web.negotiation.JsonFallbackNegotiation",
    "DEFAULT_SCHEMA_CLASS": "lms.schema.ApiAutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "EXCEPTION_HANDLER": "lms.errors.api_exception_handler",
    "NON_FIELD_ERRORS_KEY": "nonFieldErrors",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_RATES": {
        "invite_lookup": os.environ.get("LMS_INVITE_LOOKUP_RATE", "60/min"),
    },
    "NUM_PROXIES": int(os.environ["LMS_NUM_PROXIES"])
    if os.environ.get("LMS_NUM_PROXIES")
    else None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

# --- Browsers: CORS for pages on LMS_CORS_ORIGINS (comma-separated, default none) --------
# API paths only (never the admin); no cookies (the bearer token is the credential). A
# preflight from a listed origin is answered without a token (lms/web/cors.py).
CORS_ALLOWED_ORIGINS = env_list("LMS_CORS_ORIGINS")
CORS_URLS_REGEX = r"^/api/"
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_HEADERS = ["accept", "authorization", "content-type", "idempotency-key", "x-request-id"]
CORS_ALLOW_METHODS = ["DELETE", "GET", "OPTIONS", "PATCH", "POST"]
CORS_EXPOSE_HEADERS = ["Idempotent-Replayed", "X-Request-ID", "Retry-After"]

SPECTACULAR_SETTINGS = {
    "TITLE": "Learning Management Service API",
    "DESCRIPTION": "Downloads and their assets, learner progress and course activities, "
    "bundles, organization invites and automations. Authentication, errors, limits, the "
    "completion rules and every decision beyond this schema: the "
    "[API guide](/api/docs/guide).",
    "EXTERNAL_DOCS": {"description": "The API guide", "url": "/api/docs/guide"},
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Several components have a "status"; the learner's full set of them gets its own name.
    "ENUM_NAME_OVERRIDES": {
        "ProgressStatusEnum": "learn.models.ProgressStatus",
        "InviteStatusEnum": "organizations.serializers.INVITE_STATUSES",
        "AutomationTriggerEnum": "automations.registry.TRIGGER_NAMES",
        "ActionTypeEnum": "automations.registry.ACTION_TYPE_NAMES",
    },
    # ``<id:...>`` path segments are UUIDs (a malformed one is an unknown record, 404).
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "string", "format": "uuid"}},
    "SWAGGER_UI_SETTINGS": {"persistAuthorization": True},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "lms.schema.link_guide_sections",
        "lms.schema.type_error_codes",
        "lms.schema.name_shared_schemas",
    ],
}

# --- Background work: automations' runs (docs/architecture.md "Events and background work")
# The Django tasks API; its database backend by default (a worker: `manage.py db_worker`),
# RQ on Redis with LMS_TASKS_BACKEND=rq and REDIS_URL (a worker: `manage.py rqworker
# --with-scheduler --job-class django_tasks_rq.Job <queue>`), so that workers can run on
# other machines.
LMS_TASKS_BACKEND = os.environ.get("LMS_TASKS_BACKEND", "database")
LMS_TASKS_QUEUE = os.environ.get("LMS_TASKS_QUEUE", "default")
if LMS_TASKS_BACKEND == "rq":
    if not REDIS_URL:
        raise ImproperlyConfigured("LMS_TASKS_BACKEND=rq needs REDIS_URL.")
    INSTALLED_APPS.append("django_rq")
    RQ_QUEUES = {LMS_TASKS_QUEUE: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 300}}
    _tasks_backend = "django_tasks_rq.RQBackend"
elif LMS_TASKS_BACKEND == "database":
    _tasks_backend = "django_tasks_db.DatabaseBackend"
else:
    raise ImproperlyConfigured("LMS_TASKS_BACKEND must be database or rq.")
TASKS = {"default": {"BACKEND": _tasks_backend, "QUEUES": [LMS_TASKS_QUEUE]}}
# Each failed action is tried again after this many seconds, doubling, up to 5 attempts.
LMS_AUTOMATION_RETRY_BASE_SECONDS = float(os.environ.get("LMS_AUTOMATION_RETRY_BASE_SECONDS", "10"))
LMS_AUTOMATION_ATTEMPTS = 5
# How long a worker holds a run it took; a run still unfinished this long after it was due
# is enqueued again by `manage.py sweep_automation_runs` (its worker died).
LMS_AUTOMATION_LEASE_SECONDS = float(os.environ.get("LMS_AUTOMATION_LEASE_SECONDS", "60"))
LMS_WEBHOOK_ALLOW_PRIVATE = env_bool("LMS_WEBHOOK_ALLOW_PRIVATE", False)
# After a signing secret is rotated, deliveries are signed with the old one too for this long
# (CONTRACT 8.8), so that a receiver can switch without refusing one.
LMS_WEBHOOK_SECRET_OVERLAP_SECONDS = float(
    os.environ.get("LMS_WEBHOOK_SECRET_OVERLAP_SECONDS", "86400")
)
# One webhook attempt, all included (resolving, connecting, sending, the whole answer), ends
# within this many seconds (CONTRACT 8.8: 10; the worker tests shorten it).
LMS_WEBHOOK_DEADLINE_SECONDS = float(os.environ.get("LMS_WEBHOOK_DEADLINE_SECONDS", "10"))
# A lease outlives an attempt, so that no other worker takes the run while it is under way:
# twice the deadline leaves the attempt's own database work as long again.
if LMS_AUTOMATION_LEASE_SECONDS < 2 * LMS_WEBHOOK_DEADLINE_SECONDS:
    raise ImproperlyConfigured(
        "LMS_AUTOMATION_LEASE_SECONDS must be at least twice LMS_WEBHOOK_DEADLINE_SECONDS "
        f"({LMS_AUTOMATION_LEASE_SECONDS:g} < 2 x {LMS_WEBHOOK_DEADLINE_SECONDS:g}): a run's "
        "lease must outlive a webhook attempt, or another worker takes the run meanwhile."
    )
# At most this many enabled automations of one organization have one trigger (CONTRACT 8.9):
# one event starts at most this many runs.
LMS_AUTOMATIONS_PER_TRIGGER = int(os.environ.get("LMS_AUTOMATIONS_PER_TRIGGER", "50"))
# Test sends (CONTRACT 8.8) per organization in any 60 seconds, counted in the shared store.
LMS_TEST_SENDS_PER_MINUTE = int(os.environ.get("LMS_TEST_SENDS_PER_MINUTE", "10"))
# The database task backend keeps a row per task; the sweep deletes those finished longer
# ago than this (RQ expires its own results).
LMS_TASK_RESULTS_KEEP_SECONDS = int(os.environ.get("LMS_TASK_RESULTS_KEEP_SECONDS", "86400"))

# --- E-mail: printed to the console unless LMS_EMAIL_HOST names an SMTP server -------------
EMAIL_HOST = os.environ.get("LMS_EMAIL_HOST", "")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = int(os.environ.get("LMS_EMAIL_PORT", "587"))
EMAIL_HOST_USER = os.environ.get("LMS_EMAIL_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("LMS_EMAIL_PASSWORD", "")
EMAIL_USE_TLS = env_bool("LMS_EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = os.environ.get("LMS_EMAIL_FROM", "lms@localhost")

# --- Metrics: GET /metrics for the bearer of LMS_METRICS_TOKEN (lms/ops/metrics.py) -----------
# Counted only with a token. Every process of a machine (gunicorn's workers, the task
# workers) then writes its counts under one folder for a scrape to sum.
LMS_METRICS_TOKEN = os.environ.get("LMS_METRICS_TOKEN", "")
if LMS_METRICS_TOKEN:
    metrics_dir()

# --- Logging: one JSON object a line, each with the request id ----------------------------
LOG_LEVEL = os.environ.get("LMS_LOG_LEVEL", "INFO").upper()
# An access line for each static file (the admin's, the Swagger UI's) that the app serves:
# on in production, where a proxy that does not serve them leaves them to us; `make run` and
# `make serve` turn it off, so a page's dozens of files do not scroll the demo tokens away.
LMS_LOG_STATIC = env_bool("LMS_LOG_STATIC", True)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "lms.ops.logs.RequestIdFilter"}},
    "formatters": {"json": {"()": "lms.ops.logs.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Our middleware writes one access line per request; Django's own duplicates it.
        "django.request": {"level": "CRITICAL", "propagate": True},
        "django.server": {"level": "WARNING", "propagate": True},
        "django.db.backends": {"level": "INFO", "propagate": True},
        "axes.apps": {"level": "WARNING", "propagate": True},  # its start-up banner
    },
}

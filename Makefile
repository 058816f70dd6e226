# Two commands do all the set-up on a machine with Python 3.11+ and make:
#   make run    install, migrate, seed the demo data if the database has none yet, and serve
#               on http://127.0.0.1:8000 (LMS_BIND for another address; 2 workers unless
#               LMS_WORKERS says otherwise), with a task worker for automations beside it
#               (Ctrl-C stops both). Run again, it keeps everything and prints the manifest
#   make serve  serve without seeding anything: the demo tokens and passwords stay valid
#   make seed   re-seed the demo: its members' progress is reset, new tokens and passwords
#   make test   install with the dev tools, lint, and run the whole suite on both cores
#               (SQLite by default; PostgreSQL when DATABASE_URL points at one)
#   make quick  the inner loop: every test that starts no process, server or browser
#   make screenshots  the admin's editors and run pages as PNGs under docs/admin/ (headless Chromium)
#   make bench  load figures, ours / textbook / floor / ceiling per operation (needs wrk)
#               (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/lms_bench;
#               BENCH_ARGS for bench/load.py, e.g. BENCH_ARGS="--duration 3 --only bundles")

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
BENCH_ARGS ?=
# pytest-xdist workers for `make test` and `make quick` (0: one process, no xdist).
TEST_WORKERS ?= 2

.PHONY: run serve seed test quick lint bench clean screenshots

$(VENV)/.python-ok:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || \
		{ echo "Python 3.11 or newer is needed (PYTHON=$(PYTHON))." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.python-ok
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.python-ok
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

# A laptop needs a small server (production sizes from the CPUs in gunicorn.conf.py).
run serve: export LMS_WORKERS ?= 2
# Not an access line for each of a page's static files (production logs them: LMS_LOG_STATIC).
run serve: export LMS_LOG_STATIC ?= false
SERVED_AT = http://$(subst 0.0.0.0,127.0.0.1,$(or $(LMS_BIND),127.0.0.1:8000))
# The automations' worker (database backend, or RQ with LMS_TASKS_BACKEND=rq) and the sweep
# that enqueues runs whose worker died, beside gunicorn, each started again whenever it exits
# (deploy/keep-running); Ctrl-C (or gunicorn ending) stops all.
QUEUE = $(or $(LMS_TASKS_QUEUE),default)
WORKER = $(if $(filter rq,$(LMS_TASKS_BACKEND)),rqworker --with-scheduler --job-class django_tasks_rq.Job $(QUEUE),db_worker --queue-name $(QUEUE))
SERVE = sh deploy/keep-running $(BIN)/python manage.py $(WORKER) & worker=$$!; \
	sh deploy/keep-running $(BIN)/python manage.py sweep_automation_runs --every 60 & sweeper=$$!; \
	trap 'kill $$worker $$sweeper 2>/dev/null; wait' EXIT INT TERM; \
	$(BIN)/gunicorn -c gunicorn.conf.py

run: $(VENV)/.installed
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py createcachetable
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py seed_demo --if-missing
	@echo "Serving on $(SERVED_AT) with a task worker (Ctrl-C to stop)"
	@$(SERVE)

serve: $(VENV)/.installed
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py createcachetable
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@$(BIN)/python manage.py demo_manifest || true
	@echo "Serving on $(SERVED_AT) with a task worker (Ctrl-C to stop; the demo tokens and passwords above still work)"
	@$(SERVE)

seed: $(VENV)/.installed
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py createcachetable
	$(BIN)/python manage.py seed_demo

# mypy reads the files [tool.mypy] lists in pyproject.toml (lms/ and every app's services,
# selectors, wire reads and views), with the Django and DRF plugins.
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Tests marked `processes` (servers, workers, browsers, throwaway clusters, commands) are
# left out; `make test` runs them too, all on one worker in turn (tests/conftest.py).
quick: $(VENV)/.installed-dev
	$(BIN)/pytest -q -n $(TEST_WORKERS) -m "not processes" $(PYTEST_ARGS)

# The browser tests of the editors, saving what they show (shown in the README).
screenshots: $(VENV)/.installed-dev
	LMS_ADMIN_SCREENSHOTS=docs/admin LMS_REQUIRE_BROWSER=true $(BIN)/pytest -q tests/browser/test_admin_editors.py \
		tests/browser/test_admin_automation_runs.py tests/browser/test_admin_webhook_operations.py \
		tests/browser/test_admin_invites.py tests/browser/test_admin_rough_edges.py \
		tests/browser/test_admin_enrol_members.py

bench: $(VENV)/.installed
	$(BIN)/python bench/load.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache

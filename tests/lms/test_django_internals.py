"""The private parts of Django's ORM that ``lms/db/compiled.py`` and ``lms/tenancy.py``
rely on, each held here by name and by what the code needs of it: after a Django upgrade the
test of a part that changed fails, naming it (docs/architecture.md, "Upgrading Django")."""

from __future__ import annotations

import inspect

import pytest
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.sql import Query

from bundles.models import Bundle
from organizations.models import ApiToken
from tests.helpers import make_member

pytestmark = pytest.mark.django_db


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


# --- lms/tenancy.py ----------------------------------------------------------------------


def test_queryset_filter_or_exclude_takes_negate_args_kwargs():
    """``OrgScopedQuerySet._filter_or_exclude`` overrides it to see a filter on ``org``."""
    assert _parameters(QuerySet._filter_or_exclude) == ["self", "negate", "args", "kwargs"]


def test_queryset_chain_and_clone_copy_the_queryset(org):
    """``_clone`` is overridden to carry the scope flag; ``across_orgs`` calls ``_chain``."""
    assert _parameters(QuerySet._clone) == ["self"]
    assert _parameters(QuerySet._chain) == ["self"]
    scoped = Bundle.objects.for_org(org)
    assert scoped._chain()._org_scoped and scoped._clone()._org_scoped
    assert scoped.filter(name="x")._org_scoped  # filter goes through _chain and _clone


def test_queryset_fetch_all_is_where_every_evaluation_reads(org):
    """``_fetch_all`` is where the guard checks iteration, ``len``, ``list`` and ``get``."""
    assert "_fetch_all" in QuerySet.__dict__ and "_result_cache" in vars(Bundle.objects.all())
    seen = []
    original = QuerySet._fetch_all

    def watch(self):
        seen.append(self.model)
        original(self)

    QuerySet._fetch_all = watch
    try:
        list(Bundle.objects.for_org(org))
        listed = len(seen)
        Bundle.objects.for_org(org).filter(name="none").first()
    finally:
        QuerySet._fetch_all = original
    assert listed >= 1 and len(seen) > listed and set(seen) == {Bundle}


def test_a_related_managers_queryset_hints_its_instance(org):
    """``_check_scope`` lets a record's related rows through by ``_hints["instance"]``."""
    member = make_member(org)
    assert member.membership.tokens.all()._hints["instance"] is member.membership
    assert ApiToken.all_orgs.all()._hints.get("instance") is None


def test_query_is_empty_after_none():
    """``_check_scope`` lets ``.none()`` through by ``query.is_empty()``."""
    assert Bundle.objects.none().query.is_empty()
    assert not Query(Bundle).is_empty()


def test_q_is_a_tree_of_children_connector_and_negated():
    """``_q_names_org`` walks a ``Q`` by ``children`` (tuples or ``Q``), ``connector`` and
    ``negated``."""
    q = Q(org=1) & Q(Q(name="a") | Q(name="b"))
    assert q.connector == Q.AND and not q.negated
    assert q.children[0] == ("org", 1) and isinstance(q.children[1], Q)
    assert (~Q(org=1)).negated


# --- lms/db/compiled.py ------------------------------------------------------------------


def test_a_querysets_database_pin_is_for_write_or_db():
    """``Compiled`` keeps a read on the database it was pinned to (``_for_write``, ``_db``),
    else asks the router on every call."""
    assert not Bundle.objects.all()._for_write and Bundle.objects.all()._db is None
    assert Bundle.objects.select_for_update()._for_write
    assert Bundle.objects.using("default")._db == "default"


def test_the_compiler_answers_sql_params_select_and_converters(org):
    """``_compile`` and ``_converters``: ``query.get_compiler(using=).as_sql()``, then
    ``compiler.select[:col_count]`` and ``compiler.get_converters(expressions)``."""
    queryset = Bundle.objects.for_org(org).values_list("id", "created_at", "name")
    compiler = queryset.query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    assert sql.startswith("SELECT") and len(params) == 1
    assert compiler.col_count == 3 and len(compiler.select) >= 3
    fields = [selected[0] for selected in compiler.select[: compiler.col_count]]
    converters = compiler.get_converters(fields)
    assert all(
        isinstance(index, int) and isinstance(pair, tuple) and len(pair) == 2
        for index, pair in converters.items()
    )


def test_query_selected_names_a_values_lists_columns(org):
    """``Compiled.records`` names a ``values_list``'s columns by ``query.selected``."""
    queryset = Bundle.objects.for_org(org).values_list("id", "name")
    assert tuple(queryset.query.selected) == ("id", "name")


def test_the_operations_escape_a_like_pattern():
    """A ``Compiled`` read rebinds a LIKE value with ``ops.prep_for_like_query``."""
    assert connection.ops.prep_for_like_query("50%_a") == r"50\%\_a"


def test_the_connection_opens_cursors_through_these_steps():
    """``preparing_cursor`` opens a cursor as ``BaseDatabaseWrapper._cursor`` and ``cursor``
    do, step by step."""
    for name in (
        "close_if_health_check_failed",
        "ensure_connection",
        "validate_thread_sharing",
        "make_debug_cursor",
        "make_cursor",
    ):
        assert callable(getattr(connection, name)), name
    assert isinstance(connection.queries_logged, bool)
    with connection.wrap_database_errors:
        pass


@pytest.mark.postgres
def test_postgresql_has_a_server_binding_cursor_and_composes_sql():
    """``_PreparingCursor`` subclasses psycopg 3's ``ServerBindingCursor`` as Django's
    backend names it, and logs a prepared read with ``ops.compose_sql``."""
    import psycopg
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.ensure_connection()
    assert hasattr(connection.connection, "prepare_threshold")
    assert issubclass(ServerBindingCursor, psycopg.Cursor)
    assert connection.ops.compose_sql("SELECT %s", [1]) == "SELECT 1"


def test_the_upgrading_section_names_tests_that_exist():
    """docs/architecture.md, "Upgrading Django": each test it names is one of these."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "architecture.md").read_text()
    section = doc.split("\n## Upgrading Django\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`(test_\w+)`", section))
    defined = {
        match
        for path in (root / "tests" / "lms").glob("test_*.py")
        for match in re.findall(r"^def (test_\w+)\(", path.read_text(), re.M)
    }
    assert len(named) > 10 and named - defined == set()
    here = set(re.findall(r"^def (test_\w+)\(", Path(__file__).read_text(), re.M))
    assert here - {"test_the_upgrading_section_names_tests_that_exist"} <= named


# --- lms/web/chains.py -----------------------------------------------------------------------


def test_a_handler_builds_its_chain_from_settings_middleware_when_loaded(settings):
    """``api_handler`` sets ``settings.MIDDLEWARE`` to the API's list for the time of
    ``BaseHandler.load_middleware``, which must read it then, and ``get_response`` must
    answer through the chain so built (``_middleware_chain``)."""
    from django.core.handlers.base import BaseHandler

    from lms.web.chains import api_handler, api_middleware

    assert _parameters(BaseHandler.load_middleware) == ["self", "is_async"]
    assert "settings.MIDDLEWARE" in inspect.getsource(BaseHandler.load_middleware)
    assert "self._middleware_chain(request)" in inspect.getsource(BaseHandler.get_response)
    handler = api_handler()
    outermost = handler._middleware_chain.__wrapped__  # convert_exception_to_response's
    assert type(outermost).__module__ + "." + type(outermost).__name__ == api_middleware()[0]
    assert api_middleware() != settings.MIDDLEWARE  # the full list is back

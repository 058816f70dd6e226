#!/usr/bin/env python
"""Where each operation's instructions go, layer by layer, against the floors': callgrind's
inclusive cost of each layer's entry, per request.

    python bench/breakdown.py                          # the reads, the writes, the floors
    python bench/breakdown.py --only automation,floor --requests 20
    python bench/breakdown.py --set LMS_SOME_SWITCH=false --json var/bench/before.json

The requests are bench/instructions.py's (bench/load.py's on the demo set), counted as it
counts them (one process per server under ``valgrind --tool=callgrind``, warmed up,
``--requests`` per operation between a zero and a dump of the counters). Python functions
are not functions to callgrind, so each layer is entered through a C function of its own: a
small extension module built here (var/bench/) has one trampoline per (enclosing layer,
layer) pair, ``L_<parent>__<layer>``, which only calls on. Each layer's entry point is
patched, in the counted process only, to go through its trampoline; a layer's own
instructions are its inclusive cost less its inner layers'. The trampolines add a few
hundred instructions a layer: the total is printed beside bench/instructions.py's.

The layers (where each is entered):

- harness: the bench's loop and the WSGI environ it builds (gunicorn parses the request
  instead; not counted here, nor its writing of the answer);
- wsgi: Django's WSGI handler around the middleware (request object, signals, response);
- middleware: the middleware chain, less the handler's ``_get_response``;
- handler: ``_get_response``, less URL resolution and the view (a template response's
  rendering lands in render);
- resolve: ``resolve_request``;
- view: the view function, less the layers below (``as_view``'s closure, DRF's dispatch);
- drf request, authentication, permissions, throttles, negotiation, finalize: the DRF
  steps (``initialize_request``, ``perform_authentication``, ``check_permissions``,
  ``check_throttles``, ``perform_content_negotiation``, ``finalize_response``);
- method: the view's ``get``/``post``/``delete``, less the read, the body and the render
  (for a write: its service, serializers and transaction);
- read: the compiled read (``Compiled.rows``/``records``), less the cursor and the driver;
- cursor: Django's cursor wrapper (``CursorWrapper.execute``/``fetch*``), less the driver;
- driver: psycopg (``Cursor.execute``/``fetch*``, ``Connection.commit``/``rollback``);
- body: a ``Shape``'s generated body builder;
- render: ``rendered`` and the renderer (orjson).
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.instructions import (  # noqa: E402
    FLOOR_KEYS,
    SERVERS,
    VAR,
    child_env,
    counted_dumps,
    helper,
)

LAYERS = (
    "harness", "wsgi", "middleware", "handler", "resolve", "view", "drf_request",
    "authentication", "permissions", "throttles", "negotiation", "method", "read", "cursor",
    "driver", "body", "render", "finalize",
)  # fmt: skip
TOP = "harness"
READS = ("activities", "bundles", "search", "invite", "automation", "courses", "outline")
WRITES = ("relink", "link", "unlink", "progress")
LABELS = {
    "activities": "4.4", "bundles": "4.5 p1", "search": "4.5 search", "invite": "4.6",
    "automation": "4.7", "courses": "8.1", "outline": "8.2", "relink": "4.1 relink",
    "link": "4.1 link", "unlink": "4.2", "progress": "4.3", "floor": "floor",
    "write": "write floor", "ceiling": "ceiling",
}  # fmt: skip
MODULE = "_bench_layers"


# --- the trampolines --------------------------------------------------------------------------


def c_source() -> str:
    lines = [
        "#define PY_SSIZE_T_CLEAN",
        "#include <Python.h>",
        "#define LAYER(name) __attribute__((noinline)) static PyObject *L_##name("
        "PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {"
        " PyObject *r = PyObject_Vectorcall(args[0], args + 1, nargs - 1, kwnames);"
        ' __asm__ volatile(""); return r; }',
    ]
    pairs = [f"{parent}__{layer}" for parent in LAYERS for layer in LAYERS if parent != layer]
    lines += [f"LAYER({pair})" for pair in pairs]
    lines.append("static PyMethodDef methods[] = {")
    lines += [
        f'  {{"{pair}", (PyCFunction)(void (*)(void))L_{pair}, METH_FASTCALL | METH_KEYWORDS,'
        " NULL},"
        for pair in pairs
    ]
    lines += [
        "  {NULL, NULL, 0, NULL}};",
        f'static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{MODULE}", NULL, -1,'
        " methods};",
        f"PyMODINIT_FUNC PyInit_{MODULE}(void) {{ return PyModule_Create(&module); }}",
    ]
    return "\n".join(lines) + "\n"


def build_module() -> Path:
    VAR.mkdir(parents=True, exist_ok=True)
    source = VAR / f"{MODULE}.c"
    library = VAR / f"{MODULE}{sysconfig.get_config_var('EXT_SUFFIX')}"
    text = c_source()
    if not library.exists() or not source.exists() or source.read_text() != text:
        source.write_text(text)
        include = sysconfig.get_paths()["include"]
        # -O0: no identical-code folding, no tail call: each trampoline stays a frame.
        subprocess.run(
            ["cc", "-O0", "-shared", "-fPIC", f"-I{include}", "-o", library, source], check=True
        )
    return library


def load_module(library: Path):
    spec = importlib.util.spec_from_file_location(MODULE, library)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- in the counted process: the patches ------------------------------------------------------


class Layers:
    def __init__(self, module) -> None:
        self.module = module
        self.stack = [TOP]

    def wrap(self, name: str, fn):
        stack, trampolines = (
            self.stack,
            {
                parent: getattr(self.module, f"{parent}__{name}")
                for parent in LAYERS
                if parent != name
            },
        )

        @functools.wraps(fn)
        def layered(*args, **kwargs):
            parent = stack[-1]
            if parent == name:  # within itself (a subclass calling super()): one layer
                return fn(*args, **kwargs)
            stack.append(name)
            try:
                return trampolines[parent](fn, *args, **kwargs)
            finally:
                stack.pop()

        layered.__wrapped_layer__ = name
        return layered

    def patch(self, owner, attribute: str, name: str) -> None:
        original = owner.__dict__.get(attribute) if isinstance(owner, type) else None
        if isinstance(owner, type) and original is None:
            return
        original = original if original is not None else getattr(owner, attribute)
        if getattr(original, "__wrapped_layer__", None):
            return
        setattr(owner, attribute, self.wrap(name, original))


def install(layers: Layers) -> None:
    """Patches each layer's entry point (Django, DRF, psycopg and the service's)."""
    import psycopg
    from django.core.handlers.base import BaseHandler
    from django.db.backends import utils as db_utils
    from rest_framework.renderers import JSONRenderer
    from rest_framework.views import APIView

    import lms.wsgi

    patch = layers.patch
    patch(BaseHandler, "_get_response", "handler")
    patch(BaseHandler, "resolve_request", "resolve")
    make_view_atomic, views_seen = BaseHandler.make_view_atomic, {}

    def view_of(handler, view):  # called per request: each view wrapped once
        wrapped = views_seen.get(view)
        if wrapped is None:
            wrapped = views_seen[view] = layers.wrap("view", make_view_atomic(handler, view))
        return wrapped

    BaseHandler.make_view_atomic = view_of
    for attribute, name in [
        ("initialize_request", "drf_request"), ("perform_authentication", "authentication"),
        ("check_permissions", "permissions"), ("check_throttles", "throttles"),
        ("perform_content_negotiation", "negotiation"), ("finalize_response", "finalize"),
    ]:  # fmt: skip
        patch(APIView, attribute, name)
    views = [APIView]
    while views:
        view = views.pop()
        views.extend(view.__subclasses__())
        for method in ("get", "post", "put", "patch", "delete"):
            patch(view, method, "method")
    for cls in (db_utils.CursorWrapper, db_utils.CursorDebugWrapper):
        for attribute in ("execute", "executemany", "fetchone", "fetchmany", "fetchall"):
            patch(cls, attribute, "cursor")
    for cls in {psycopg.Cursor, psycopg.ClientCursor, *_subclasses(psycopg.Cursor)}:
        for attribute in ("execute", "executemany", "fetchone", "fetchmany", "fetchall"):
            patch(cls, attribute, "driver")
    for attribute in ("commit", "rollback"):
        patch(psycopg.Connection, attribute, "driver")
    patch(JSONRenderer, "render", "render")
    from django.apps import apps

    if apps.is_installed("organizations"):  # the service's own (not on the floors' server)
        install_service(layers)
    handler = lms.wsgi.application
    handler.load_middleware()  # the chain again, through the patched _get_response
    handler._middleware_chain = layers.wrap("middleware", handler._middleware_chain)
    api = getattr(handler, "_api", None)  # the API's own chain (lms.web.chains)
    if api is not None:
        api._middleware_chain = layers.wrap("middleware", api._middleware_chain)

    def served(environ, start_response):
        result = handler(environ, start_response)
        try:
            return [b"".join(result)]
        finally:
            if hasattr(result, "close"):
                result.close()

    lms.wsgi.application = layers.wrap("wsgi", served)


def install_service(layers: Layers) -> None:
    from lms.db.compiled import Compiled
    from lms.web import renderers, shapes

    for attribute in ("rows", "records"):
        layers.patch(Compiled, attribute, "read")
    layers.patch(renderers.OrjsonRenderer, "render", "render")
    wrapped_rendered = layers.wrap("render", renderers.rendered)
    for module in list(sys.modules.values()):
        if getattr(module, "rendered", None) is renderers.rendered:
            module.rendered = wrapped_rendered
    for shape in [each for each in gc.get_objects() if isinstance(each, shapes.Shape)]:
        for attribute in ("body", "body_of"):
            setattr(shape, attribute, layers.wrap("body", getattr(shape, attribute)))


def _subclasses(cls) -> set:
    found, todo = set(), [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


def counted(args: argparse.Namespace) -> int:
    """Runs under callgrind: the patches, then bench/instructions.py's counting loop."""
    import django

    django.setup(set_prefix=False)
    import lms.wsgi  # noqa: F401  (the application, built before it is patched)
    from bench import instructions

    install(Layers(load_module(Path(args.module))))
    return instructions.measured(args)


# --- the driver -------------------------------------------------------------------------------


def inclusive(dump: Path) -> dict[tuple[str, str], int]:
    """(parent, layer) -> the trampoline's inclusive instructions in ``dump``."""
    done = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no", str(dump)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: dict[tuple[str, str], int] = {}
    pattern = re.compile(r"^\s*([\d,]+)\s.*?\bL_([a-z_]+?)__([a-z_]+?)(?:'\d+)?\s")
    for line in done.stdout.splitlines():
        match = pattern.match(line)
        if match and "'" not in line.split("L_", 1)[1].split()[0]:
            key = (match.group(2), match.group(3))
            found[key] = max(found.get(key, 0), int(match.group(1).replace(",", "")))
    return found


def own(pairs: dict[tuple[str, str], int], total: int) -> dict[str, int]:
    """Each layer's own instructions: its inclusive cost less its inner layers'."""
    result = {name: 0 for name in LAYERS}
    result[TOP] = total
    for (parent, layer), cost in pairs.items():
        result[layer] += cost
        result[parent] -= cost
    return result


def run(server: str, args: argparse.Namespace, library: Path, module: Path) -> dict:
    out = VAR / f"callgrind.layers.{server}.{os.getpid()}.out"
    wanted = [key for key in args.only.split(",") if (key in FLOOR_KEYS) == (server == "bare")]
    if not wanted:
        return {}
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
        sys.executable, __file__, "--child", "--server", server, "--manifest",
        str(VAR / "manifest.json"), "--helper", str(library), "--module", str(module),
        "--requests", str(args.requests), "--warmup", str(args.warmup), "--only", ",".join(wanted),
    ]  # fmt: skip
    env = child_env(args.database_url, SERVERS[server][0], args.set if server == "ours" else [])
    result = {}
    for line, dump in counted_dumps(command, env, server, out):
        total = int(re.search(r"^totals:\s+(\d+)", dump.read_text(), re.M).group(1))
        pairs = inclusive(dump)
        dump.unlink()
        count = line["count"]
        result[line["key"]] = {
            "instructions": total / count,
            "statuses": line["statuses"],
            "layers": {name: value / count for name, value in own(pairs, total).items()},
        }
    Path(out).unlink(missing_ok=True)
    return result


def format_table(figures: dict) -> str:
    keys = [key for key in (*READS, *WRITES, "floor", "write", "ceiling") if key in figures]
    lines = [
        "| layer | " + " | ".join(LABELS[key] for key in keys) + " |",
        "|---|" + "---:|" * len(keys),
    ]
    for name in LAYERS:
        cells = [f"{figures[key]['layers'][name] / 1e3:.0f}" for key in keys]
        lines.append(f"| {name.replace('_', ' ')} | " + " | ".join(cells) + " |")
    totals = [f"**{figures[key]['instructions'] / 1e3:.0f}**" for key in keys]
    lines.append("| **total (k instructions)** | " + " | ".join(totals) + " |")
    for floor, kinds in (("floor", READS), ("write", WRITES)):
        if floor in figures:
            base = figures[floor]["instructions"]
            cells = [
                f"{figures[key]['instructions'] / base:.2f}" if key in kinds else "" for key in keys
            ]
            lines.append(f"| / {LABELS[floor]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--requests", type=int, default=20, help="per read operation")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--only", default=",".join((*READS, *WRITES, "floor", "write")))
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="for ours (repeat)"
    )
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--server", "--manifest", "--helper", "--module"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return counted(args)
    from bench.load import DEFAULT_DATABASE_URL

    args.database_url = args.database_url or DEFAULT_DATABASE_URL
    if not (VAR / "manifest.json").exists():
        sys.exit("No bench/instructions.py manifest: run bench/instructions.py once first.")
    library, module = helper(), build_module()
    figures = {}
    for server in ("ours", "bare"):
        print(f"counting {server}'s layers under callgrind ...", file=sys.stderr)
        figures.update(run(server, args, library, module))
    print(format_table(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

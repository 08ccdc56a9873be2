"""The house rules of `analysis/`, checked on its source: what a reviewer would otherwise miss.

- No import cycle between its modules (module-level imports and imports inside functions
  alike: a lazy import only hides a cycle).
- Private means private: no module uses another module's `_private` name, nor imports a
  `_module` of a package it is not inside (C modules included); a helper two modules need
  is public in one of them, or the two are one package with a clear inside.
- Every package says what it exports (`__all__`), and that is what it has: the public names
  it defines or re-exports, no more, no fewer.
- Imports follow one declared order, the house's (`HOUSE`: one export's hops,
  docs/layout.md): downwards only, and nothing on the sink's side reaches a source.
- No function in analysis/ or benchmarks/ is longer than 60 lines (ruff's C901, configured in
  pyproject.toml, keeps their branching simple too).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest
from repo import ROOT

from dims import _lazy

PACKAGE = ROOT / "dims"  # the symlink to analysis/: module names are the installed ones


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
#: The compiled modules (hatch_build.py builds each `.c` into the module of its name).
C_MODULES = {module_name(p) for p in PACKAGE.rglob("*.c")}


def resolve(current: str, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    is_package = MODULES[current].name == "__init__.py"
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(name: str) -> list[tuple[str, str | None, int]]:
    """(module, imported name or None, line) for every import in the module's source."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: list[tuple[str, str | None, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = resolve(name, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES or sub in C_MODULES:  # `from package import module`
                    found.append((sub, None, node.lineno))
                else:
                    found.append((target, alias.name, node.lineno))
    return found


def internal_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name in MODULES:
        for target, _, _ in imports_of(name):
            if target in MODULES and target != name:
                graph[name].add(target)
    return graph


def package_of(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def test_no_import_cycle_between_modules():
    graph = internal_graph()
    # a package's __init__ re-exports its inside: an edge from inside a package to its
    # own __init__ (or an ancestor's) is not a dependency of the module on its siblings
    for name, targets in graph.items():
        graph[name] = {t for t in targets if not name.startswith(t + ".")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == [], " ; ".join(" -> ".join(c) for c in cycles)


def _is_private(name: str) -> bool:
    last = name.rpartition(".")[2]
    return last.startswith("_") and not last.startswith("__")


def test_no_module_uses_another_modules_private_names():
    offenders = []
    for name in MODULES:
        for target, imported, line in imports_of(name):
            if imported and _is_private(imported):
                offenders.append(f"{name}:{line} imports {target}.{imported}")
        tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
        aliases = {
            alias.asname or alias.name: target
            for target, imported, _ in imports_of(name)
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
            if imported is None and target in MODULES
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _is_private(node.attr)
            ):
                offenders.append(f"{name}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert offenders == [], "\n".join(offenders)


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_no_module_imports_the_inside_of_a_package_it_is_not_in():
    """A `_module` (httpx's `_client.py`, msgspec's `_core`) is its package's inside: only
    modules of that package (or of packages within it) import it; everyone else takes the
    names the package exports. `dims._lazy` serves all of `analysis`; nothing outside
    `dims._tables` imports `dims._tables._batches`."""
    assert {"dims._tables._gather", "dims._tables._columnar"} <= C_MODULES
    offenders = [
        f"{name}:{line} imports {target}"
        for name in MODULES
        for target, _, line in imports_of(name)
        if (target in MODULES or target in C_MODULES)
        and _is_private(target)
        and not _inside(name, target.rpartition(".")[0])
    ]
    assert offenders == [], "\n".join(offenders)


def test_internal_modules_are_private():
    """Each package's modules are `_`-prefixed but the ones users import by name: the
    dataset's two contracts in storage (`paths`, `manifest`). A new public module is a
    decision: add it here and to the README's Layout."""
    public = sorted(
        name
        for name in MODULES.keys() | C_MODULES
        if name.count(".") == 2 and not name.rpartition(".")[2].startswith("_")
    )
    assert public == ["dims._storage.manifest", "dims._storage.paths"]


PACKAGES = [n for n, p in MODULES.items() if p.name == "__init__.py"]


@pytest.mark.parametrize("name", PACKAGES)
def test_packages_export_what_they_declare(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == [], f"{name}.__all__ names what it lacks: {missing}"
    assert len(set(exported)) == len(exported)


def _bound_names(name: str) -> set[str]:
    """The names a package's `__init__` binds for its users: what it defines, what it
    imports from dims (a re-export) and what it exports lazily (its TYPE_CHECKING block); not
    what it imports from elsewhere for its own use, nor what only a type checker sees."""
    found: set[str] = set()
    for node in ast.parse(MODULES[name].read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and resolve(name, node).startswith("dims"):
            found |= {alias.asname or alias.name for alias in node.names}
    found |= set(_lazy.homes_in(MODULES[name].read_text(encoding="utf-8")))
    return {n for n in found if not n.startswith("_")}


@pytest.mark.parametrize("name", PACKAGES)
def test_a_packages_all_is_its_public_members(name):
    """httpx's test of its exported members, for every package: `__all__` lists every public
    name the package defines or re-exports, and only those. The errors and warnings are
    `analysis`' to export (an older path to one, `dims._reports.DatasetError`, is kept
    out of any other `__all__`)."""
    errors = set(_reported_classes()) if name != "dims" else set()
    members = _bound_names(name) - errors
    declared = set(importlib.import_module(name).__all__)
    unlisted, unbound = sorted(members - declared), sorted(declared - members)
    assert (unlisted, unbound) == ([], []), "(public but not in __all__, in __all__ only)"


#: The house, in the order of one export's hops (the README's Layout: sources → tables →
#: storage → reports), then the orchestrator and the edges. `generated_client` is the wire.
HOUSE = (
    "dims_client",
    "dims._connection",
    "dims._fetch",
    "dims._dumps",
    "dims._tables",
    "dims._storage",
    "dims._reports",
    "dims._policy",
    "dims._snapshot",
    "dims._sdk",
    "dims.sandbox",
    "dims._cli",
)
#: Where pages come from: the service (over the wire) and saved dumps.
SOURCES = HOUSE[:4]
#: Where they go: records into tables, tables into the dataset, the dataset into reports
#: (and the reports' figures into policy's checks).
SINK_SIDE = HOUSE[4:8]
ORCHESTRATOR = "dims._snapshot"
#: The stand-in service knows the spec (the foundation), not dims' layers.
STANDALONE = ("dims.sandbox",)


def _place(module: str) -> str | None:
    """The entry of HOUSE that holds `module`; None for the foundation (analysis/*.py)."""
    return next((h for h in HOUSE if module == h or module.startswith(h + ".")), None)


def may_import(own: str | None, theirs: str | None) -> bool:
    """Whether a module placed at `own` may import one placed at `theirs`, as derived from
    HOUSE: the foundation is below everything and imports only itself (and the wire,
    whose models secrets.py masks); the rest imports downwards only, the sink's side no
    source, the stand-in service nothing but the foundation."""
    if theirs is None or own == theirs:
        return True
    if own is None:
        return theirs == "dims_client"
    below = HOUSE.index(theirs) < HOUSE.index(own)
    return below and own not in STANDALONE and not (own in SINK_SIDE and theirs in SOURCES)


@pytest.mark.parametrize(
    ("own", "theirs", "allowed"),
    [
        ("dims._storage", "dims._fetch", False),
        ("dims._storage", "dims._dumps", False),
        ("dims._storage", "dims_client", False),
        ("dims._storage", ORCHESTRATOR, False),
        ("dims._storage", "dims._tables", True),
        ("dims._fetch", "dims._storage", False),
        ("dims._fetch", "dims._tables", False),
        ("dims._fetch", "dims._connection", True),
        ("dims._dumps", ORCHESTRATOR, False),
        ("dims._tables", "dims._fetch", False),
        ("dims._tables", "dims._dumps", False),
        ("dims._tables", "dims._storage", False),
        ("dims._tables", "dims._reports", False),
        ("dims._reports", "dims._fetch", False),
        ("dims._reports", "dims._connection", False),
        ("dims._reports", "dims._storage", True),
        ("dims._reports", ORCHESTRATOR, False),
        ("dims._reports", "dims._policy", False),
        ("dims._policy", "dims._reports", True),
        ("dims._policy", "dims._storage", True),
        ("dims._policy", "dims._fetch", False),
        ("dims._policy", ORCHESTRATOR, False),
        ("dims._cli", "dims._policy", True),
        (ORCHESTRATOR, "dims._fetch", True),
        (ORCHESTRATOR, "dims._dumps", True),
        (ORCHESTRATOR, "dims._storage", True),
        (ORCHESTRATOR, "dims._reports", True),
        (ORCHESTRATOR, "dims._cli", False),
        ("dims.sandbox", "dims._tables", False),
        ("dims._cli", "dims.sandbox", True),
        (None, "dims._tables", False),
    ],
)
def test_the_order_allows_the_flow_and_nothing_else(own, theirs, allowed):
    """What `may_import` derives from HOUSE, pinned for the edges issue 28 is about."""
    assert may_import(own, theirs) is allowed


def test_imports_follow_the_house_order():
    """Every import of every module (inside functions too) keeps to `may_import`. The one
    exception is `analysis` itself, the SDK's door, which names its exports' homes."""
    assert {_place(name) for name in MODULES} == {None, *HOUSE[1:]}
    offenders = [
        f"{name}:{line} imports {target} ({_place(name) or 'the foundation'} -> {_place(target)})"
        for name in MODULES
        if name != "dims"
        for target, _, line in imports_of(name)
        if (target in MODULES or target in C_MODULES or _place(target) == "dims_client")
        and not may_import(_place(name), _place(target))
    ]
    assert offenders == [], "\n".join(offenders)


def _names_taken_from(name: str, package: str) -> list[tuple[str, int]]:
    """(name, line) of what module `name` takes from `package`: `from package import x`, or
    `package.x` where it imported the package itself."""
    taken = [
        (imported, line)
        for target, imported, line in imports_of(name)
        if imported and target == package
    ]
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and resolve(name, node) == package.rpartition(".")[0]
        for alias in node.names
        if alias.name == package.rpartition(".")[2]
    }
    taken += [
        (node.attr, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in aliases
    ]
    return taken


def test_the_reports_read_the_dataset_and_never_write_it():
    """The reports take storage's reading side only: no name of the writer's session."""
    homes = _lazy.homes_in(MODULES["dims._storage"].read_text(encoding="utf-8"))
    taken = [
        (name, imported, line)
        for name in MODULES
        if _place(name) == "dims._reports"
        for imported, line in _names_taken_from(name, "dims._storage")
    ]
    assert {imported for _, imported, _ in taken} >= {"read_tables", "history_counts"}
    writer = [
        f"{name}:{line} takes {imported}"
        for name, imported, line in taken
        if homes.get(imported, ("",))[0] in ("._writer", "._workspaces")
    ]
    assert writer == []


def _reaches(name: str, targets: tuple[str, ...]) -> list[str]:
    """Imports of `name` (module-level or inside functions) of any of `targets` or below."""
    return [
        f"{name}:{line} imports {target}"
        for target, _, line in imports_of(name)
        if any(target == t or target.startswith(t + ".") for t in targets)
    ]


def test_storage_never_imports_a_source_or_the_orchestrator():
    """Data flows one way: storage is handed finished tables and never calls back into the
    fetch, the connection, the generated client, a dump or the orchestrator (issue 28)."""
    storage = [name for name in MODULES if name.startswith("dims._storage")]
    assert "dims._storage._writer" in storage
    found = [hit for name in storage for hit in _reaches(name, (*SOURCES, ORCHESTRATOR))]
    assert found == [], "\n".join(found)


def test_the_sources_never_import_storage_or_the_orchestrator():
    """The sources hand their outcome on (`dims._evidence`) and know nothing of where it
    goes: `workspace_fetch` took `Workspace` from storage before issue 28."""
    sources = [name for name in MODULES if _place(name) in SOURCES]
    assert {"dims._fetch._workspaces", "dims._dumps._reader"} <= set(sources)
    found = [hit for name in sources for hit in _reaches(name, ("dims._storage", ORCHESTRATOR))]
    assert found == [], "\n".join(found)


def test_the_snapshot_writer_is_handed_data_never_a_function_or_a_source():
    """The writer's session takes tables, counts and evidence: no parameter of its API is
    a callable to call back, nor an iterable it would pull (where the network would be)."""
    import inspect
    import typing

    from dims._storage import _writer as writer

    api = [writer.open_snapshot, writer.SnapshotWriter.__init__]
    api += [f for n, f in vars(writer.SnapshotWriter).items() if inspect.isfunction(f)]
    offending = []
    for function in api:
        for name, hint in typing.get_type_hints(function).items():
            text = repr(hint)
            if "Callable" in text or "Iterable" in text or "Iterator" in text:
                offending.append(f"{function.__qualname__}({name}: {text})")
    assert offending == []
    assert not hasattr(writer, "export_snapshot")  # the pages are the orchestrator's


def test_storage_never_takes_back_rows_it_wrote():
    """Which copy of a deployment a day keeps is decided once, at publish, by one function
    (`dims._copies.rank`): the writer's session is fed and published, never asked to
    un-write rows; no page tells it to; no module but `_copies` ranks copies."""
    import dataclasses
    import inspect

    from dims import _snapshot as snapshot
    from dims._pages import Page
    from dims._storage import _writer as writer

    assert not (PACKAGE / "_storage" / "_replaced.py").exists()
    assert not (PACKAGE / "_fetch" / "_copies.py").exists()
    session = {n for n, f in vars(writer.SnapshotWriter).items() if inspect.isfunction(f)}
    assert {n for n in session if not n.startswith("_")} == {"write", "publish", "abandon"}
    fed = {n for n in vars(snapshot._Session) if not n.startswith("_")}
    assert fed == {"snapshot_at", "write"}  # what the reading hands the session, and no more
    assert "replaces" not in {f.name for f in dataclasses.fields(Page)}
    asked = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name in {
                "OneCopy",
                "Replacement",
                "rank",
            }:
                assert name == "dims._copies", f"{name} defines {node.name}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                receiver = ast.unparse(node.func.value)
                if receiver.endswith(("session", "writer", "memory")) and node.func.attr in {
                    "replace",
                    "remove",
                }:
                    asked.append(f"{name}: {ast.unparse(node.func)}")
    assert asked == []


def test_generated_readers_show_their_source_in_tracebacks():
    import inspect
    import traceback

    from dims._tables._layout import Layout
    from dims._tables._rules import compile_function

    plan = Layout(include_env_values=False).deployment_plan
    assert "def read(obj, path, row, unknown):" in inspect.getsource(plan.read)

    boom = compile_function(["def read(x):", "    return 1 // x  # the generated line"], "t", {})
    try:
        boom(0)
    except ZeroDivisionError:
        shown = traceback.format_exc()
    assert "return 1 // x  # the generated line" in shown
    assert "<dims generated: t #" in shown


def test_the_cli_starts_without_the_heavy_modules():
    """`dims --help` imports only what parsing the command line needs (start-up time)."""
    import subprocess
    import sys

    # importlib.metadata: the version is looked up only for --version (about 60 ms)
    heavy = ("pandas", "pyarrow", "duckdb", "matplotlib", "dims_client", "msgspec", "httpx",
             "importlib.metadata")  # fmt: skip
    code = (
        "import sys, dims._cli; dims._cli.build_parser(); "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def reported_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small exported fleet with its report tables, so `dims sql` has every kind of view."""
    import fleet_math as fm

    from dims import _reports as reports
    from dims.sandbox import generate_fleet

    out = tmp_path_factory.mktemp("dataset")
    fleet = generate_fleet(12, seed=3)
    fm.export_fleet(fleet.deployments, fleet.deployment_types, out, "2025-06-02")
    reports.write_report(out)
    assert sorted((out / "reports").rglob("*.parquet")), "the report wrote no table"
    return out


@pytest.mark.parametrize(
    "argv",
    [
        ["sql", "select 1"],  # reads no table: no view is made, and no Arrow imported
        ["sql", "select count(*) from deployments"],
        ["sql", "select count(*) from capacity_summary"],  # a report table
        ["catalog", "{tmp}/dims.duckdb"],
    ],
)
def test_a_query_imports_neither_pandas_nor_the_reports(argv, reported_dataset, tmp_path):
    """Issue 39 item 4: `dims sql` and `dims catalog` answer from DuckDB and Arrow alone;
    pandas and dims._reports (a third of a second to import) are never loaded, checked in
    the command's own process at its end; a query that reads no table not pyarrow either."""
    import subprocess
    import sys

    unwanted = ("pandas", "dims._reports") + ("pyarrow",) * (argv == ["sql", "select 1"])
    code = (
        "import sys; from dims._cli import main\n"
        "code = main(sys.argv[1:])\n"
        f"print(code, [m for m in {unwanted!r} if m in sys.modules])"
    )
    args = [a.format(tmp=tmp_path) for a in argv] + ["--out", str(reported_dataset)]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout[-2000:] + done.stderr
    if argv[0] == "sql":
        assert done.stdout.splitlines()[-2] == "(1 row)", done.stdout  # it did answer
    else:
        assert (tmp_path / "dims.duckdb").is_file()


#: The modules of analysis/_cli/ that are no command's: main, the parser and what commands share.
CLI_MACHINERY = {
    "dims._cli",
    "dims._cli.__main__",
    "dims._cli._main",
    "dims._cli._parser",
    "dims._cli._commands",
    "dims._cli._exits",
    "dims._cli._options",
    "dims._cli._output",
}


def test_every_command_is_one_module_that_declares_its_options_and_runs():
    """`dims` joins a command to its code through one table (`_parser.COMMANDS`): each
    command's module declares its options, `add_arguments(parser)`, and runs the command,
    `run(args) -> int`; each module of analysis/_cli/ but the machinery is one command's."""
    import argparse
    import inspect

    from dims._cli import _parser

    parser = _parser.build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    # `CommandLine.parse` finds the command as argparse does only while this holds
    own = [a for a in parser._actions if a.option_strings]
    assert own and all(a.nargs == 0 for a in own), "an option of `dims` itself takes a value"
    assert list(commands.choices) == list(_parser.COMMANDS)
    modules = {name: _parser.command_module(name) for name in commands.choices}
    assert len({module.__name__ for module in modules.values()}) == len(modules)
    for module in modules.values():
        for function, parameter in (("add_arguments", "parser"), ("run", "args")):
            defined = getattr(module, function, None)
            assert inspect.isfunction(defined), f"{module.__name__} has no {function}()"
            assert list(inspect.signature(defined).parameters) == [parameter], defined
        assert inspect.signature(module.run).return_annotation == "int", module.__name__
    in_cli = {name for name in MODULES if name.startswith("dims._cli")}
    assert in_cli - CLI_MACHINERY == {module.__name__ for module in modules.values()}


@pytest.mark.parametrize(
    ("argv", "loaded"),
    [(["--help"], []), (["sql", "--help"], ["_sql"]), (["sql", "select 1"], ["_sql"])],
)
def test_a_command_imports_its_own_module_only(argv, loaded, tmp_path):
    """Commands are loaded on demand: `dims --help` imports no command's module (nor what
    they import to define their options: the spec's filters, the code hosts), a command
    only its own."""
    import subprocess
    import sys

    code = (
        "import sys; from dims._cli import main\n"
        "try:\n    main(sys.argv[2:] + ['--out', sys.argv[1]] * (sys.argv[2] != '--help'))\n"
        "except SystemExit:\n    pass\n"
        "print([m.rpartition('.')[2] for m in sorted(sys.modules) if m.startswith('dims._cli.')"
        " and m.rpartition('.')[2] not in ('_main', '_parser', '_exits', '_output', '_options')])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), *argv],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == repr(loaded), done.stderr[-2000:]


def test_the_package_exports_resolve_lazily_to_their_homes():
    import dims
    from dims import _errors as errors
    from dims._storage import _reader

    assert dims.DimsError is errors.DimsError
    assert dims.read_table is _reader.read_table
    assert dims.sandbox.__name__ == "dims.sandbox"
    assert dir(dims) == dims.__all__ == sorted(_lazy.homes_in(MODULES["dims"].read_text()))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        dims.nothing  # noqa: B018


def test_dims_is_the_one_door():
    """Issue 36: `dims` exports what a user needs and everything below it is private. The public
    set is written once, in dims/__init__.py's TYPE_CHECKING block (`dims._lazy` derives the
    lazy homes and `__all__` from it); every package under it is `_`-prefixed but the sandbox,
    and no name of the door is a module's private one."""
    import dims

    below = sorted(n for n in PACKAGES if n.count(".") == 1)
    assert [n for n in below if not n.split(".")[1].startswith("_")] == ["dims.sandbox"]
    assert [n for n in dims.__all__ if n.startswith("_")] == []
    assert len(dims.__all__) < 130, "the door grows: is each new name one a user needs?"
    for name in dims.__all__:
        assert getattr(dims, name) is not None


def test_nothing_imports_the_old_top_level_names():
    """Installed, dims is `dims` and `dims_client`: no test, benchmark, notebook or doc imports
    `analysis` or `generated_client` (the repository's folder names)."""
    pattern = re.compile(r"^\s*(from|import) (analysis|generated_client)\b", re.M)
    places = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("notebooks/*.ipynb")]
    places += [
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("benchmarks/**/*.py"),
        *PACKAGE.rglob("*.py"),
    ]
    offenders = [str(p.relative_to(ROOT)) for p in places if pattern.search(p.read_text())]
    offenders += [
        str(p.relative_to(ROOT))
        for p in ROOT.glob("notebooks/*.ipynb")
        if re.search(r"(from|import) (analysis|generated_client)\b", p.read_text())
    ]
    assert offenders == []


def test_every_name_of_the_door_is_documented_once():
    """docs/reference/dims.md renders each name of the door once (`::: dims.NAME`)."""
    import dims

    page = (ROOT / "docs/reference/dims.md").read_text(encoding="utf-8")
    documented = re.findall(r"^::: dims\.(\w+)$", page, re.M)
    assert sorted(documented) == sorted(set(documented)), "a name documented twice"
    assert sorted(set(dims.__all__) - set(documented)) == []
    assert sorted(set(documented) - set(dims.__all__)) == []


def test_an_export_from_a_dump_loads_no_service_client_and_no_pandas():
    """`dims export --from-json` imports what it uses: no httpx, generated client or pandas."""
    import subprocess
    import sys

    unwanted = ("httpx", "dims_client", "pandas", "duckdb", "matplotlib")
    code = (
        "import sys, dims._cli._export; from dims._snapshot import snapshot_from_dump; "
        f"print([m for m in {unwanted!r} if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_export_command_from_a_dump_never_loads_the_service_client_or_pandas(tmp_path):
    """Run as a user runs it: the connection options (limits per request) are parsed, but
    what they configure is built only where a connection is made. And no pandas (about
    0.25 s): pyarrow imports it when it converts Python values (pa.array, pa.scalar), so
    the tables are laid out by `dims._tables._arrays` instead. Piped, no progress bar
    is drawn, so tqdm is not imported either."""
    import subprocess
    import sys

    from dims.sandbox import fleet_dump_bytes, generate_fleet

    dump = tmp_path / "fleet.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(20, seed=1)))
    argv = ["export", "--from-json", str(dump), "--out", str(tmp_path / "out")]
    code = (
        "import sys; from dims._cli import main; "
        f"code = main({argv!r}); "
        "print(code, [m for m in ('httpx', 'dims_client', 'pandas', 'tqdm') "
        "if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"


MAX_FUNCTION_LINES = 60
# Files whose long functions are being split elsewhere (none now).
LONG_FUNCTIONS_ALLOWED: tuple[str, ...] = ()


def test_no_function_is_longer_than_60_lines():
    """Every function (docstring included) fits on a screen: longer ones become named steps."""
    too_long = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]):
        where = path.relative_to(ROOT).as_posix()
        if where.startswith(LONG_FUNCTIONS_ALLOWED):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    too_long.append(f"{where}:{node.lineno} {node.name} has {lines} lines")
    assert too_long == [], "\n".join(too_long)


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("3", "3")])
def test_the_command_line_keeps_blas_to_one_thread_unless_told(given, expected, tmp_path):
    """numpy's OpenBLAS threads spin while idle and take CPU from an export's own threads:
    the CLI asks for one before numpy loads, and a user's own setting wins. (`dims explain`
    loads numpy: `dims sql "select 1"` no longer does.)"""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = (
        "import os, sys; from dims._cli import main; main(['explain', '--out', sys.argv[1], "
        "'x']); print(os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == f"{expected} True", done.stderr[-2000:]


# -- errors and warnings: one home, all exported ----------------------------------------------


def _imported_modules() -> list[ModuleType]:
    """Every module of analysis/, imported (`__main__` modules run a program: not those)."""
    return [importlib.import_module(name) for name in MODULES if not name.endswith("__main__")]


def _reported_classes() -> dict[str, type]:
    """Every DimsError and every warning class defined anywhere in analysis/, by name (its
    own: an alias, a second name bound to a class, is in `_aliases`)."""
    from dims._errors import DimsError

    found: dict[str, type] = {}
    for module in _imported_modules():
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and value.__name__ == name
                and issubclass(value, DimsError | Warning)
            ):
                assert name not in found, f"two classes named {name}"
                found[name] = value
    return found


def test_no_error_has_a_second_name():
    """Aliases went before 1.0 (issue 36): each error and warning class is bound to one name,
    its own, in every module that holds it."""
    from dims._errors import DimsError

    second = [
        f"{module.__name__}.{name} is {value.__name__}"
        for module in _imported_modules()
        for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, DimsError | Warning)
        and value.__module__.startswith("dims") and value.__name__ != name
    ]  # fmt: skip
    assert second == []


def test_every_error_and_warning_lives_in_errors_and_is_exported_from_analysis():
    import dims
    from dims import _errors as errors

    found = _reported_classes()
    elsewhere = [f"{c.__module__}.{n}" for n, c in found.items() if c.__module__ != errors.__name__]
    assert elsewhere == [], "define these in analysis/_errors.py"
    assert {"DimsError", "DimsWarning", "WorkspacesFailed", "WorkerLost"} <= set(found)
    warnings = [n for n, c in found.items() if issubclass(c, Warning)]
    assert [n for n in warnings if not issubclass(found[n], errors.DimsWarning)] == []
    assert sorted(n for n in found if dims.__all__.count(n) != 1) == []
    homes = _lazy.homes_in(MODULES["dims"].read_text(encoding="utf-8"))
    assert sorted(n for n in found if homes.get(n) != ("._errors", n)) == []
    assert sorted(n for n in found if getattr(dims, n) is not found[n]) == []


def test_no_error_or_warning_is_exported_twice():
    """`analysis` exports them; a module's `__all__` that lists one too is a second door."""
    found = _reported_classes()
    twice = [
        f"{module.__name__}.__all__ lists {name}"
        for module in _imported_modules()
        if module.__name__ != "dims"
        for name in getattr(module, "__all__", ())
        if name in found
    ]
    assert twice == []


def _drawn_trees(doc: str) -> dict[str, tuple[str, ...]]:
    """name -> the bases a tree in `doc` draws for it (the parent; and a category in
    parentheses). A tree is a block of lines, each `├── Name`, `└── Name` or a bare root."""
    drawn: dict[str, tuple[str, ...]] = {}
    for block in doc.split("\n\n"):
        lines = [line[4:] for line in block.splitlines() if line.startswith("    ")]
        if not lines or not all(re.fullmatch(r"[│├└─ ]*\w+.*", line) for line in lines):
            continue
        parents: list[str] = []
        for line in lines:
            match = re.match(r"([│├└─ ]*?)(\w+)(?:\s+\((\w+)\))?", line)
            assert match is not None
            depth = len(match[1]) // 4
            parents[depth:] = [match[2]]
            drawn[match[2]] = (*parents[depth - 1 : depth], *filter(None, [match[3]]))
    return drawn


def test_the_trees_drawn_in_the_errors_docstring_are_the_classes():
    from dims import _errors as errors

    assert errors.__doc__ is not None
    drawn = _drawn_trees(errors.__doc__)
    found = _reported_classes()
    assert sorted(drawn) == sorted(found)
    actual = {
        name: tuple(base.__name__ for base in cls.__bases__ if base not in (Exception, Warning))
        for name, cls in found.items()
    }
    assert drawn == actual


# -- sync and async twins -----------------------------------------------------------------------


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _parameters(node: Function) -> list[tuple[str, str, str]]:
    """(name, kind, default) of each parameter, as written."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found = [
        (arg.arg, "positional only" if arg in args.posonlyargs else "positional", default)
        for arg, default in zip(positional, defaults, strict=True)
    ]
    found += [(args.vararg.arg, "*", None)] if args.vararg else []
    found += [
        (arg.arg, "keyword only", default)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    found += [(args.kwarg.arg, "**", None)] if args.kwarg else []
    return [(name, kind, "" if d is None else ast.unparse(d)) for name, kind, d in found]


def _twins() -> list[tuple[str, Function, Function]]:
    """(where, sync, async) for every public function or method `x` with a twin `ax`."""
    pairs = []
    for name, path in MODULES.items():
        scopes = [(name, ast.parse(path.read_text(encoding="utf-8")).body)]
        while scopes:
            where, body = scopes.pop()
            functions = {n.name: n for n in body if isinstance(n, Function)}
            for fname, node in functions.items():
                if not fname.startswith("_") and f"a{fname}" in functions:
                    pairs.append((f"{where}.{fname}", node, functions[f"a{fname}"]))
            scopes += [(f"{where}.{n.name}", n.body) for n in body if isinstance(n, ast.ClassDef)]
    return pairs


def test_every_sync_function_and_its_async_twin_take_the_same_parameters():
    twins = _twins()
    assert "dims._fetch._listings.fetch_deployments" in [where for where, _, _ in twins]
    differ = [
        f"{where}: {_parameters(sync)} != {_parameters(asynchronous)}"
        for where, sync, asynchronous in twins
        if _parameters(sync) != _parameters(asynchronous)
    ]
    assert differ == [], "\n".join(differ)


def _class_twins() -> list[tuple[str, Function, Function]]:
    """(where, sync, async) for every public method of a class `X` whose twin `AsyncX` in the
    same package has a method of that name (the SDK: `Deployments.list` and
    `AsyncDeployments.list`, `Client.take_snapshot` and `AsyncClient.take_snapshot`)."""
    classes: dict[tuple[str, str], ast.ClassDef] = {}
    for name, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                classes[(package_of(name), node.name)] = node
    pairs = []
    for (package, cname), node in classes.items():
        twin = classes.get((package, f"Async{cname}"))
        if twin is None:
            continue
        mine = {n.name: n for n in node.body if isinstance(n, Function)}
        theirs = {n.name: n for n in twin.body if isinstance(n, Function)}
        for method in sorted(set(mine) & set(theirs)):
            if not method.startswith("_"):
                where = f"{package}.{cname}.{method}"
                pairs.append((where, mine[method], theirs[method]))
    return pairs


def _annotated(node: Function) -> list[tuple[str, str, str, str]]:
    """`_parameters` with each parameter's annotation, as written."""
    args = node.args
    every = [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else [])]
    every += [*args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]
    notes = {a.arg: ast.unparse(a.annotation) if a.annotation else "" for a in every}
    return [(n, kind, default, notes[n]) for n, kind, default in _parameters(node)]


def test_every_sdk_class_and_its_async_twin_take_the_same_parameters():
    """Issue 37: the async client is the sync one awaited, to the filters' types."""
    twins = _class_twins()
    where = [w for w, _, _ in twins]
    assert "dims._sdk.Deployments.list" in where and "dims._sdk.Client.take_snapshot" in where
    assert "dims._sdk.DeploymentsWithRawResponse.list" in where
    differ = [
        f"{w}: {_annotated(sync)} != {_annotated(asynchronous)}"
        for w, sync, asynchronous in twins
        if _annotated(sync) != _annotated(asynchronous)
    ]
    assert differ == [], "\n".join(differ)


# -- seams: nothing reaches into another object's insides --------------------------------------


def test_no_module_reads_another_objects_private_attributes():
    """`x._name` only on `self` or `cls`: the generated client's `_httpx_args`, httpx's
    clients' `_transport` are theirs (dims keeps what it needs, e.g. `DimsClient.transport`)."""
    offenders = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                offenders.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert offenders == [], "\n".join(offenders)


def test_only_the_transport_touches_httpx_extensions():
    """The transport and the fetch layer meet in typed functions (`with_decoder`,
    `decoded_json`): no other module reads or writes a request's or response's extensions."""
    offenders = []
    for name, path in MODULES.items():
        if name == "dims._connection._transport":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "extensions") or (
                isinstance(node, ast.Constant) and node.value == "extensions"
            ):
                offenders.append(f"{name}:{node.lineno}")
    assert offenders == [], "\n".join(offenders)

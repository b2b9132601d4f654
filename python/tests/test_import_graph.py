"""No import loops: the module graph of python/haslab and the folder graph of the simulator core
have no cycle except the deliberate ones listed here, each with its reason.

The Python graph is read from the source with ``ast``: every ``import`` and ``from ... import``
(at module level or inside a function: a loop broken by a late import is still a loop),
``importlib.import_module("...")`` and ``__import__("...")`` with a literal name, and the
package's lazy attributes (``haslab._LAZY_SUBMODULES``, ``haslab._LAZY_NAMES``), which import
their module on first use. Importing a submodule also runs its parent package, but that edge is
the package layout itself and is not counted; ``from . import name`` counts as an import of the
package unless ``name`` is a submodule.

The Rust graph joins the top-level modules of crates/haslab-core/src (a folder and its
``<name>.rs``): A -> B when code in A names ``crate::B`` or reaches B through ``super::``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import haslab

REPO = Path(__file__).resolve().parents[1].parent
PACKAGE = REPO / "python" / "haslab"
CORE_SRC = REPO / "crates" / "haslab-core" / "src"

#: Deliberate Python import loops: the modules of the loop (a set) and why it is there.
PYTHON_ALLOWED: dict[frozenset[str], str] = {}

#: Deliberate loops between the core's top-level modules, with the reason (docs/architecture.md).
RUST_ALLOWED: dict[frozenset[str], str] = {
    frozenset({"app", "has"}): (
        "app::AppReport::Player carries has::PlayerLog: a player's report is its log "
        "(named in a comment in app/mod.rs)"
    ),
}


def python_modules(root: Path) -> dict[str, tuple[Path | None, bool]]:
    """Dotted name -> (source file or None for an extension module, is a package)."""
    mods: dict[str, tuple[Path | None, bool]] = {}
    for f in root.rglob("*"):
        if "__pycache__" in f.parts:
            continue
        rel = f.relative_to(root.parent)
        if f.suffix == ".py":
            parts = list(rel.with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts.pop()
            mods[".".join(parts)] = (f, is_pkg)
        elif f.suffix in (".so", ".pyd"):
            parts = list(rel.parts)
            parts[-1] = parts[-1].split(".")[0]
            mods[".".join(parts)] = (None, False)
    return mods


def _absolute(module: str, is_pkg: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    if not is_pkg:
        base.pop()
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def python_graph(root: Path) -> dict[str, dict[str, int]]:
    """Module -> {imported module: line of the first such import}, within the package."""
    mods = python_modules(root)
    graph: dict[str, dict[str, int]] = {m: {} for m in mods}

    def add(src: str, dst: str, line: int) -> None:
        if dst in mods and dst != src:
            graph[src].setdefault(dst, line)

    for module, (path, is_pkg) in mods.items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(module, alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(module, is_pkg, node.level, node.module) if node.level else node.module or ""
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    add(module, sub if sub in mods else base, node.lineno)
            elif isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                arg = node.args[0]
                if name in ("__import__", "import_module") and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    add(module, arg.value, node.lineno)
    lazy = list(getattr(haslab, "_LAZY_SUBMODULES", ())) + list(getattr(haslab, "_LAZY_NAMES", {}).values())
    for name in lazy:
        add("haslab", f"haslab.{name}", 0)
    return graph


def rust_graph(src: Path) -> dict[str, dict[str, str]]:
    """Top-level module -> {other top-level module it names: first place it does}."""
    tops = {p.name.removesuffix(".rs") for p in src.iterdir() if p.name != "lib.rs"}
    graph: dict[str, dict[str, str]] = {t: {} for t in tops}
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        top = rel.parts[0].removesuffix(".rs")
        if top == "lib":
            continue
        path = list(rel.with_suffix("").parts)
        if path[-1] == "mod":
            path.pop()
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//")[0]
            named = [m.group(1) for m in re.finditer(r"\bcrate::(\w+)", code)]
            for group in re.finditer(r"\bcrate::\{([^}]*)\}", code):
                named += re.findall(r"(?:^|,)\s*(\w+)", group.group(1))
            for m in re.finditer(r"\b((?:super::)+)(\w+)", code):
                if len(path) == m.group(1).count("super::"):  # climbs to the crate root
                    named.append(m.group(2))
            for t in named:
                if t in tops and t != top:
                    graph[top].setdefault(t, f"{rel}:{i}")
    return graph


def cycles(graph: dict[str, dict]) -> list[frozenset[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _describe(loop: frozenset[str], graph: dict[str, dict]) -> str:
    return "; ".join(f"{a} -> {b} ({graph[a][b]})" for a in sorted(loop) for b in sorted(graph[a]) if b in loop)


def test_the_cycle_finder_finds_a_loop_and_only_a_loop():
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles(g) == [frozenset({"a", "b", "c"})]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_the_python_graph_sees_late_dynamic_and_relative_imports(tmp_path):
    pkg = tmp_path / "haslab"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import x\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("import importlib\nimportlib.import_module('haslab.c')\n")
    (pkg / "c.py").write_text("from . import a\n__import__('haslab.sub.b')\n")
    g = python_graph(pkg)
    assert set(g["haslab"]) >= {"haslab.a"}
    assert set(g["haslab.a"]) == {"haslab.sub.b"}
    assert set(g["haslab.sub.b"]) == {"haslab.c"}
    assert set(g["haslab.c"]) == {"haslab.a", "haslab.sub.b"}
    assert frozenset({"haslab.a", "haslab.sub.b", "haslab.c"}) in cycles(g)


def test_python_package_has_no_import_loop_but_the_listed_ones():
    graph = python_graph(PACKAGE)
    assert {"haslab.cli", "haslab.sweep", "haslab.reproduce.registry"} <= set(graph)
    assert "haslab.cli_sweep" in graph["haslab.cli"], "cli.py's __import__ of its subcommands is seen"
    found = cycles(graph)
    unexpected = [loop for loop in found if loop not in PYTHON_ALLOWED]
    assert not unexpected, "import loops: " + " | ".join(_describe(loop, graph) for loop in unexpected)
    stale = [sorted(loop) for loop in PYTHON_ALLOWED if loop not in found]
    assert not stale, f"allowed loops that no longer exist (remove them from the list): {stale}"


def test_the_core_modules_have_no_loop_but_the_listed_ones():
    graph = rust_graph(CORE_SRC)
    assert {"sim", "net", "tcp", "app", "has", "scenario", "world"} <= set(graph)
    assert "sim" in graph["tcp"] and "scenario" in graph["world"]
    found = cycles(graph)
    unexpected = [loop for loop in found if loop not in RUST_ALLOWED]
    assert not unexpected, "module loops: " + " | ".join(_describe(loop, graph) for loop in unexpected)
    stale = [sorted(loop) for loop in RUST_ALLOWED if loop not in found]
    assert not stale, f"allowed loops that no longer exist (remove them from the list): {stale}"


def test_nothing_below_the_scenario_layer_names_it():
    graph = rust_graph(CORE_SRC)
    users = sorted(top for top, deps in graph.items() if "scenario" in deps and top != "world")
    assert not users, {top: graph[top]["scenario"] for top in users}

"""Layers import only downward, and the core has no import circle (docs/architecture.md).

Every module of ``agentcli`` sits on one floor of :data:`FLOORS`. An import of another
agentcli module, at the top of a file or inside a function (``if TYPE_CHECKING:`` blocks
excluded: they never run), may point to the same floor or one below, never above; and the
modules below the top floor import no circle, even through function-level imports.

``python tests/core/test_layers.py`` prints every arrow up and every circle.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# From the bottom up: a module's floor is its most specific pattern ("pkg.*" covers the
# package's modules, not the package's __init__, which is named on its own).
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("data", (  # frozen data, errors, events and the small services every layer uses
        "agentcli", "agentcli.records", "agentcli.schema", "agentcli.errors", "agentcli.exit_codes",
        "agentcli.events", "agentcli.type_schema", "agentcli.paths", "agentcli.redact",
        "agentcli.textsafe", "agentcli.yaml_loader", "agentcli.sqlite_wal", "agentcli.files",
        "agentcli.log_schema", "agentcli.deadline", "agentcli._sync", "agentcli.runnable",
        "agentcli.history", "agentcli.state", "agentcli.pricing", "agentcli.project_files",
        "agentcli._json_repair", "agentcli.recovery", "agentcli.outcome", "agentcli.answers",
    )),
    ("handlers", (  # observing and changing a run: callback handlers, middleware
        "agentcli.callbacks", "agentcli.callbacks.*", "agentcli.middleware",
    )),
    ("models", ("agentcli.models", "agentcli.models.*", "agentcli.cache")),
    ("tools", (  # Tool, the registry and the tool families; the MCP client
        "agentcli.tools", "agentcli.tools.*", "agentcli.mcp", "agentcli.mcp.*",
        "agentcli.approval",
    )),
    ("agents", (  # the agent types: prompt, parser, request/decide; what an answer is
        "agentcli.agents", "agentcli.agents.*", "agentcli.structured", "agentcli.memory",
    )),
    ("run", ("agentcli.run",)),  # the state of one run and the effects the loop yields
    # the loop, a generator of effects (no I/O), and how a run of it starts
    ("loop", ("agentcli.loop_setup", "agentcli.loop")),
    ("driver", ("agentcli._drive",)),  # fulfils the loop's effects on asyncio
    ("executor", ("agentcli.executor",)),  # the public API: invoke, stream, batch
    ("factories", (  # settings -> a runnable agent; a conversation across runs; the store
        "agentcli.create", "agentcli.runtime", "agentcli.config", "agentcli.config_values",
        "agentcli.config_docs",
        "agentcli.user_config", "agentcli.project_trust", "agentcli.keys",
        "agentcli.saved_templates", "agentcli.session",
        "agentcli.store", "agentcli.run_logging", "agentcli.otel_export",
    )),
    ("apps", (  # the front doors: nothing below imports them
        "agentcli.__main__", "agentcli.cli", "agentcli.cli.*", "agentcli.serve",
        "agentcli.serve.*", "agentcli.batch", "agentcli.demo", "agentcli.compat",
        "agentcli.compat.*", "tests.support", "tests.support.*",
    )),
]
TOP = FLOORS[-1][0]


def modules() -> dict[str, Path]:
    """Every agentcli module by dotted name."""
    found = {}
    for path in sorted((ROOT / "agentcli").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def floor_of(name: str) -> int | None:
    """The index in FLOORS of a module's floor (None: on no floor)."""
    best: tuple[int, int] | None = None  # (specificity, floor)
    for index, (_, patterns) in enumerate(FLOORS):
        for pattern in patterns:
            if pattern.endswith(".*"):
                prefix = pattern[:-1]
                hit = name.startswith(prefix) and len(prefix)
            else:
                hit = name == pattern and len(pattern) + 1
            if hit and (best is None or hit > best[0]):
                best = (hit, index)
    return None if best is None else best[1]


def _targets(name: str, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    base = node.module or ""
    if node.level:
        here = name.split(".") if known[name].name == "__init__.py" else name.split(".")[:-1]
        here = here[: len(here) - node.level + 1]
        base = ".".join([*here, *([node.module] if node.module else [])])
    out = set()
    for alias in node.names:
        full = f"{base}.{alias.name}"
        if full in known:
            out.add(full)
        elif base in known:
            out.add(base)
    return out


def imports() -> dict[str, set[str]]:
    """Each module's imports of other agentcli modules that run (not TYPE_CHECKING ones)."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        found: set[str] = set()

        def visit(node: ast.AST, name: str = name, found: set[str] = found) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    for other in child.orelse:
                        visit(other)
                    continue
                if isinstance(child, ast.Import | ast.ImportFrom):
                    found |= _targets(name, child, known)
                visit(child)

        visit(ast.parse(path.read_text(encoding="utf-8")))
        found.discard(name)
        graph[name] = found
    return graph


def arrows_up(graph: dict[str, set[str]]) -> list[str]:
    """Every import pointing to a higher floor, as 'a (floor) -> b (floor)'."""
    names = [n for n, _ in FLOORS]
    out = []
    for source, targets in sorted(graph.items()):
        low = floor_of(source)
        for target in sorted(targets):
            high = floor_of(target)
            if low is not None and high is not None and high > low:
                out.append(f"{source} ({names[low]}) -> {target} ({names[high]})")
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles (strongly connected components of two or more modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def core(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph of the modules below the top floor."""
    top = [n for n, _ in FLOORS].index(TOP)
    keep = {n for n in graph if floor_of(n) != top}
    return {n: graph[n] & keep for n in keep}


def test_every_module_is_on_a_floor() -> None:
    lost = sorted(n for n in modules() if floor_of(n) is None)
    assert not lost, f"put these modules on a floor in FLOORS: {lost}"


def test_no_import_points_up_a_floor() -> None:
    assert arrows_up(imports()) == []


def test_the_core_has_no_import_circle() -> None:
    assert circles(core(imports())) == []


def test_the_check_sees_function_level_imports_and_skips_type_checking() -> None:
    """The walk the checks rely on: an import inside a function counts, a TYPE_CHECKING one
    does not (so a circle closed by a function-level import is still a circle)."""
    graph = imports()
    assert "agentcli.schema" in graph["agentcli.outcome"]
    assert "agentcli.models.base" not in graph["agentcli.loop"]  # TYPE_CHECKING only
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert arrows_up({"agentcli.schema": {"agentcli.executor"}}) == [
        "agentcli.schema (data) -> agentcli.executor (executor)"]
    assert floor_of("agentcli.cli.app") == len(FLOORS) - 1
    assert floor_of("agentcli.tools.base") == 3


if __name__ == "__main__":
    g = imports()
    for line in arrows_up(g):
        print("up:", line)
    for circle in circles(g):
        print("circle:", " ".join(circle))
    print("unplaced:", sorted(n for n in modules() if floor_of(n) is None))

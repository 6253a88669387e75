"""Print the structure figures issue 32 (Core v4) sets targets for, measured from the source.

    python bench/structure.py

Lines and ``Any`` lines in ``agentcli/``, modules over 500 lines, function-level imports of
agentcli modules, import circles and arrows up a layer (the floors of
``tests/core/test_layers.py``), and own-body sync/async twins: a ``name``/``aname`` pair in one
class or module whose sides do not hand their work to one another and each have more than a
few lines of their own.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.core.test_layers import arrows_up, circles, imports, modules  # noqa: E402


def function_level_imports(paths: dict[str, Path]) -> int:
    """Imports of agentcli modules made inside a function body."""
    count = 0
    for path in paths.values():
        for func in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in func.body:
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and (
                        inner.level or (inner.module or "").startswith("agentcli")):
                        count += 1
                    elif isinstance(inner, ast.Import):
                        count += sum(a.name.startswith("agentcli") for a in inner.names)
    return count


def _names(func: ast.AST) -> set[str]:
    """The names a function refers to (``f`` and ``self.f`` both give ``f``)."""
    names = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
    return names


def _body_lines(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function's body, its docstring left out."""
    body = func.body[1:] if ast.get_docstring(func) is not None else func.body
    return 0 if not body else (body[-1].end_lineno or 0) - body[0].lineno + 1


SMALL = 4


def own_body_twins(paths: dict[str, Path]) -> list[str]:
    """``x``/``ax`` pairs in one scope where neither side refers to the other and both have
    more than :data:`SMALL` lines of body."""
    found = []
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes: list[tuple[str, list[ast.stmt]]] = [(name, tree.body)]
        scopes += [(f"{name}.{node.name}", node.body) for node in ast.walk(tree)
                   if isinstance(node, ast.ClassDef)]
        for scope, body in scopes:
            defs = {d.name: d for d in body
                    if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef)}
            for sync_name, sync in defs.items():
                twin = defs.get(f"a{sync_name}")
                if twin is None or not isinstance(twin, ast.AsyncFunctionDef) or isinstance(
                        sync, ast.AsyncFunctionDef):
                    continue
                if twin.name in _names(sync) or sync_name in _names(twin):
                    continue  # one side hands its work to the other
                if min(_body_lines(sync), _body_lines(twin)) <= SMALL:
                    continue  # a few lines each around a shared helper

                found.append(f"{scope}: {sync_name}/{twin.name}")
    return found


def main() -> None:
    paths = modules()
    texts = {name: path.read_text(encoding="utf-8") for name, path in paths.items()}
    lines = {name: text.count("\n") for name, text in texts.items()}
    any_lines = sum(len(re.findall(r"^.*\bAny\b.*$", t, re.M)) for t in texts.values())
    graph = imports()
    big = sorted((n, c) for n, c in lines.items() if c > 500)
    twins = own_body_twins(paths)
    print(f"agentcli/ lines                    {sum(lines.values()):>7,}")
    print(f"lines with Any                     {any_lines:>7,}")
    print(f"modules                            {len(paths):>7}")
    print(f"modules over 500 lines             {len(big):>7}  {big or ''}")
    print(f"function-level agentcli imports    {function_level_imports(paths):>7}")
    print(f"import circles                     {len(circles(graph)):>7}")
    print(f"arrows up a layer                  {len(arrows_up(graph)):>7}")
    print(f"own-body sync/async twins          {len(twins):>7}")
    for twin in twins:
        print(f"    {twin}")


if __name__ == "__main__":
    main()

"""The one YAML loader: PyYAML's safe loader, with alias expansion bounded.

``yaml.safe_load`` shares an aliased node instead of copying it, so a 1 KB file of nested
aliases (``b: [*a, *a, *a, ...]`` nine levels deep, the "billion laughs") loads at once, and
then whatever walks the value (expanding ``${VAR}`` in an MCP server's ``env``, filling a
template's ``defaults``) runs out of memory. :func:`load_yaml` counts what the document would
be with every alias written out and refuses one past :data:`MAX_YAML_NODES`; a document
without aliases is not walked at all.
"""

from __future__ import annotations

from typing import Any

import yaml

from agentcli.errors import ConfigError

MAX_YAML_NODES = 1_000_000  # values of a document with every alias expanded


class YAMLBombError(yaml.YAMLError):
    """Aliases that expand past :data:`MAX_YAML_NODES` values, or refer to themselves."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


class _Loader(yaml.SafeLoader):
    """SafeLoader noting whether the document uses an alias."""

    aliased = False

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self.aliased = True
        return super().compose_node(parent, index)


def _expanded(node: yaml.Node, memo: dict[int, int], open_: set[int]) -> int:
    """Values under ``node`` with every alias written out (each shared node counted once
    per reference, computed once)."""
    key = id(node)
    if key in memo:
        return memo[key]
    if key in open_:
        raise YAMLBombError("an alias refers to the value that contains it")
    open_.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        total += sum(_expanded(child, memo, open_) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        total += sum(_expanded(k, memo, open_) + _expanded(v, memo, open_)
                     for k, v in node.value)
    open_.discard(key)
    if total > MAX_YAML_NODES:
        raise YAMLBombError(f"its aliases expand to more than {MAX_YAML_NODES:,} values "
                            "(an alias bomb?); write the values out")
    memo[key] = total
    return total


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing alias expansion past :data:`MAX_YAML_NODES` values
    with a :class:`YAMLBombError` (a ``yaml.YAMLError``: callers' handlers name the file)."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if loader.aliased:
            _expanded(node, {}, set())
        return loader.construct_document(node)
    except RecursionError:
        raise YAMLBombError("values nested too deeply") from None
    finally:
        loader.dispose()


def load_mapping(text: str, where: str, fix: str) -> dict[str, Any]:
    """A YAML document that is a mapping (``{}`` when empty); otherwise a one-line
    ConfigError naming ``where`` (and the line of a syntax error) and ending with ``fix``."""
    try:
        data = load_yaml(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise ConfigError(f"{where}{line}: {problem}; {fix}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the top level must be a mapping; {fix}")
    return data

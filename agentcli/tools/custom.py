"""Custom tools: Python files (``--tools-module``) and installed plugins (entry-point group
``agentcli.tools``), read into the catalog that asks for them (``tools/resolve.py``): nothing
registers into a process-wide table, so two catalogs in one process never share a plugin's
tools or its warnings."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import field, replace
from pathlib import Path
from types import ModuleType

from agentcli.errors import ToolLoadError
from agentcli.records import record
from agentcli.tools.base import Tool
from agentcli.tools.registry import ToolSpec, registry

ENTRY_POINT_GROUP = "agentcli.tools"


@record(frozen=False)
class Plugins:
    """What the installed plugins give one catalog."""

    specs: list[ToolSpec] = field(default_factory=list)  # source ``plugin``, in load order
    warnings: list[str] = field(default_factory=list)  # one line per broken plugin
    clashes: list[str] = field(default_factory=list)  # a tool named like a built-in (exit 2)


def _spec_for(obj: Tool | ToolSpec, source: str) -> ToolSpec:
    if isinstance(obj, ToolSpec):
        return replace(obj, source=source)
    return ToolSpec(obj.name, lambda **_: obj, obj.description.split(". ")[0][:120],
                    dangerous=obj.dangerous, danger_reason=obj.danger_reason, source=source)


def flatten_plugin(obj: object) -> list[Tool | ToolSpec]:
    """The tools a plugin's entry point gives: a Tool, a ToolSpec, a list, or a function
    returning them."""
    if isinstance(obj, (Tool, ToolSpec)):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [x for item in obj for x in flatten_plugin(item)]
    if callable(obj):
        return flatten_plugin(obj())
    raise TypeError(f"expected a Tool, a ToolSpec or a list of them, got {type(obj).__name__}")


def load_plugins() -> Plugins:
    """The tools of the installed plugins; a broken plugin becomes a warning line, a tool
    named like a built-in a clash."""
    found = Plugins()
    if not _may_have_plugins():
        return found
    from importlib.metadata import entry_points

    builtins = registry()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            items = flatten_plugin(ep.load())
        except KeyboardInterrupt:
            raise
        except BaseException as err:  # a plugin's bug (even sys.exit) must not silence the CLI
            found.warnings.append(f"plugin {ep.name!r} failed to load: {load_failure(err)}")
            continue
        for item in items:
            spec = _spec_for(item, "plugin")
            old = builtins.get(spec.name)
            if old is not None and old.source != "plugin":  # never shadow a built-in's gate
                found.clashes.append(
                    f"tool name {spec.name!r} is defined twice, as a built-in tool and by "
                    f"plugin {ep.name!r}; uninstall or rename one of them")
                continue
            found.specs = [s for s in found.specs if s.name != spec.name] + [spec]
    return found


def load_failure(err: BaseException) -> str:
    """Why a plugin failed to load, in a few words."""
    if isinstance(err, SystemExit):
        return f"it called sys.exit({err.code!r}) at import"
    return f"{type(err).__name__}: {err}"


def _may_have_plugins() -> bool:
    """False only when no installed distribution declares an ``agentcli.tools`` entry point.

    Reads the ``entry_points.txt`` files on ``sys.path`` directly, which costs far less than
    importing :mod:`importlib.metadata`; anything it cannot read (a zip on the path) counts as
    a maybe, and then the real lookup decides. The answer is kept while no folder on the
    path changes (installing a distribution adds its ``-info`` folder, which changes the
    folder's mtime): a run builds its tool catalog twice, a chat on every ``/tools``.
    """
    return _scan_for_plugins(tuple(_stamp(entry or ".") for entry in sys.path))


def _stamp(folder: str) -> tuple[str, int]:
    try:
        return folder, os.stat(folder).st_mtime_ns
    except OSError:
        return folder, -1


@functools.lru_cache(maxsize=1)
def _scan_for_plugins(stamps: tuple[tuple[str, int], ...]) -> bool:
    section = f"[{ENTRY_POINT_GROUP}]".encode()  # ASCII: the same bytes in UTF-8 text
    for folder, _ in stamps:
        if os.path.isfile(folder):
            return True  # a zip archive: let importlib.metadata look inside
        try:  # os.scandir, not Path.glob: no pattern to compile and match, for every catalog
            infos = [e.path for e in os.scandir(folder) if e.name.endswith("-info")]
        except OSError:
            continue  # not a folder (an import hook's entry), or gone
        for info in infos:  # .dist-info, .egg-info; most declare no entry point at all
            declared = os.path.join(info, "entry_points.txt")
            if os.path.exists(declared):  # (a failed open costs an exception: ~3x a stat)
                with contextlib.suppress(OSError), open(declared, "rb") as text:
                    if section in text.read():
                        return True
    return False


def module_specs(path: str | Path) -> list[ToolSpec]:
    """Import a Python file (once per version of it) and return a spec for every module-level
    Tool/ToolSpec (source ``module``)."""
    return [_spec_for(item, "module") for item in _tools_in(_import_module(path))]


def module_state_schema(paths: Iterable[str | Path]) -> type | None:
    """The ``state_schema`` the last of these --tools-module files declares, if any."""
    found = [getattr(_import_module(p), "state_schema", None) for p in paths]
    return next((t for t in reversed(found) if isinstance(t, type)), None)


def _tools_in(module: ModuleType) -> list[Tool | ToolSpec]:
    return [v for k, v in vars(module).items()
            if not k.startswith("_") and isinstance(v, (Tool, ToolSpec))]


def _import_module(path: str | Path) -> ModuleType:
    file = Path(path).expanduser()
    if not file.is_file():
        raise ToolLoadError(f"--tools-module {file}: no such file")
    return _load(str(file.resolve()), file.stat().st_mtime)


@functools.cache  # once per version of the file: its top-level code runs once
def _load(path: str, mtime: float) -> ModuleType:
    mod_name = f"agentcli_user_tools_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ToolLoadError(f"--tools-module {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # sys.exit in the file, too: one line, not silence
        raise ToolLoadError(f"--tools-module {path} failed: {load_failure(err)}") from None
    if not _tools_in(module):
        raise ToolLoadError(f"--tools-module {path} defines no tools; decorate functions "
                            "with @tool (from agentcli import tool)")
    return module

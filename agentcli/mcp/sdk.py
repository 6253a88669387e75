"""The MCP SDK's client side, loaded without the rest of the SDK.

``import mcp`` runs the SDK's package ``__init__``, which imports its server side, its CLI
helpers and its high-level ``Client`` too (mcp 2.3: 116 ``mcp`` modules and 580 in all, where
a client session needs 37 and 350; ~0.25 s of CPU more, seconds on a loaded machine). So
:func:`require_sdk` puts the ``mcp`` and ``mcp.client`` packages in place as shells that have
not run their ``__init__``; the submodules we use (``mcp.client.session``, ``mcp.types``, the
transports) import as usual. A name asked of a shell is its submodule if there is one, else
the shell runs its ``__init__`` after all and answers (PEP 562 ``__getattr__``): code that
uses ``mcp`` as published still gets it. ``bench/mcp_startup.py`` has the row.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from importlib.machinery import ModuleSpec
from types import ModuleType

from agentcli.errors import ToolLoadError
from agentcli.mcp.config import INSTALL_HINT

_SHELLS = ("mcp", "mcp.client")
_lock = threading.RLock()  # servers start side by side, each on its own thread


def require_sdk() -> None:
    """Make the SDK's client modules importable on their own; the install hint when the
    optional ``mcp`` package is missing."""
    with _lock:
        for name in _SHELLS:
            if sys.modules.get(name) is not None:
                continue  # loaded (None there means an import refused: find_spec says so)
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None:
                raise ToolLoadError(f"MCP servers need the optional package mcp: {INSTALL_HINT}")
            shell = _shell(name, spec)
            sys.modules[name] = shell
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, shell)


def _shell(name: str, spec: ModuleSpec) -> ModuleType:
    """The package ``name`` with its ``__path__`` (so submodules import) but its ``__init__``
    not run yet."""
    module = importlib.util.module_from_spec(spec)

    def complete(attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if importlib.util.find_spec(f"{name}.{attr}") is not None:
            return importlib.import_module(f"{name}.{attr}")  # sets the attribute too
        with _lock:
            if module.__dict__.pop("__getattr__", None) is not None:
                assert spec.loader is not None
                spec.loader.exec_module(module)  # the package as published, once
        return getattr(module, attr)

    module.__getattr__ = complete  # type: ignore[method-assign]
    return module

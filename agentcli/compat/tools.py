"""LangChain's ``BaseTool`` (a class with ``name``, ``description`` and ``_run``/``_arun``)
and ``load_tools(callback_manager=...)``.

    class Weather(BaseTool):
        name = "weather"
        description = "The weather in a city."

        def _run(self, city: str, run_manager=None) -> str:
            return "sunny"

    initialize_agent([Weather()], llm, ...)

An instance is an agentcli :class:`~agentcli.tools.base.Tool`: one ``_run`` argument (besides
``run_manager``/``callbacks``) makes a one-string tool, several make a structured tool whose
schema comes from the signature (or from ``args_schema``, a pydantic model or a JSON schema).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.manager import CallbackManager, handlers_of
from agentcli.compat.callbacks import CallbackManagerForToolRun
from agentcli.models.base import BaseChatModel
from agentcli.tools import load_tools as load
from agentcli.tools.base import Tool, schema_from_function

# what LangChain's load_tools tells the model a tool is for, where the prompt a ported program
# prints must read as LangChain's (the CLI's own prompts keep agentcli's wording)
LANGCHAIN_DESCRIPTIONS = {"Calculator": "Useful for when you need to answer questions about math."}
Handlers = CallbackManager | Iterable[BaseCallbackHandler] | None
_MANAGED = ("run_manager", "callbacks", "self")
_OWN = ("name", "description", "args_schema", "return_direct")


class BaseTool(Tool):
    """Subclass with ``name``, ``description`` and ``_run`` (``_arun`` for async)."""

    name: str
    description: str = ""

    def __init__(self, **fields: object) -> None:
        cls = type(self)
        given = {k: fields.pop(k, getattr(cls, k, None)) for k in _OWN}
        name = given["name"] if isinstance(given["name"], str) else cls.__name__
        run = self._run
        params = [p for p in inspect.signature(run).parameters.values()
                  if p.name not in _MANAGED and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        schema = _schema(given["args_schema"])
        if schema is None and len(params) > 1:
            schema = schema_from_function(run)
            for managed in _MANAGED:
                schema["properties"].pop(managed, None)
            schema["required"] = [r for r in schema["required"] if r not in _MANAGED]
        has_async = cls._arun is not BaseTool._arun
        Tool.__init__(self, name, str(given["description"] or ""), func=self._call_run,
                      coroutine=self._call_arun if has_async else None, args_schema=schema,
                      return_direct=bool(given["return_direct"]))
        for key, value in {**_declared(cls), **fields}.items():  # the subclass's own fields
            object.__setattr__(self, key, value)

    def _run(self, *args: Any, **kwargs: Any) -> object:
        raise NotImplementedError(f"{type(self).__name__} must implement _run")

    async def _arun(self, *args: Any, **kwargs: Any) -> object:
        raise NotImplementedError(f"{type(self).__name__} does not support async")

    def _call_run(self, *args: object, **kwargs: object) -> object:
        return self._run(*args, **self._managed(self._run), **kwargs)

    async def _call_arun(self, *args: object, **kwargs: object) -> object:
        return await self._arun(*args, **self._managed(self._arun), **kwargs)

    def with_callbacks(self, callbacks: Handlers) -> BaseTool:
        """A copy (the subclass's own fields too) whose ``_run`` also tells ``callbacks``."""
        twin = copy.copy(self)
        object.__setattr__(twin, "callbacks", (*self.callbacks, *handlers_of(callbacks)))
        object.__setattr__(twin, "func", twin._call_run)
        if self.coroutine is not None:
            object.__setattr__(twin, "coroutine", twin._call_arun)
        return twin

    def _managed(self, method: Any) -> dict[str, object]:
        """``run_manager=`` for a ``_run``/``_arun`` that takes one, as LangChain passes it."""
        if "run_manager" not in inspect.signature(method).parameters:
            return {}
        return {"run_manager": CallbackManagerForToolRun(self.name, self.callbacks)}


def _declared(cls: type) -> dict[str, object]:
    """Defaults of the subclass's own annotated fields written pydantic's way
    (``api_wrapper: W = Field(default_factory=W)``), which no pydantic model fills here."""
    values: dict[str, object] = {}
    for klass in reversed(cls.__mro__[:cls.__mro__.index(BaseTool)]):
        for name in getattr(klass, "__annotations__", {}):
            value = vars(klass).get(name)
            if type(value).__name__ != "FieldInfo" or name in _OWN:
                continue
            factory = getattr(value, "default_factory", None)
            default = getattr(value, "default", None)
            if callable(factory):
                values[name] = factory()
            elif type(default).__name__ != "PydanticUndefinedType":
                values[name] = default
    return values


def _schema(args_schema: object) -> dict[str, Any] | None:
    """A JSON schema from a pydantic model class, or the dict given."""
    if args_schema is None or isinstance(args_schema, dict):
        return args_schema
    to_schema = getattr(args_schema, "model_json_schema", None) or getattr(
        args_schema, "schema", None)
    if to_schema is None:
        raise TypeError(f"args_schema must be a pydantic model or a JSON schema dict, got "
                        f"{type(args_schema).__name__}")
    schema: dict[str, Any] = to_schema()
    return schema


def load_tools(names: list[str], llm: BaseChatModel | None = None, callbacks: Handlers = None,
               *, callback_manager: Handlers = None, **options: Any) -> list[Tool]:
    """agentcli's ``load_tools``, also taking LangChain's older ``callback_manager``; the
    Calculator is described as LangChain describes it."""
    handlers = [*handlers_of(callback_manager), *handlers_of(callbacks)]
    tools = load(names, llm=llm, callbacks=handlers or None, **options)
    return [replace(t, description=LANGCHAIN_DESCRIPTIONS[t.name])
            if t.name in LANGCHAIN_DESCRIPTIONS else t for t in tools]

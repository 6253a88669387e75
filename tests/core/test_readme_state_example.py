"""The run-state example in docs/python-api.md runs as written (a scripted model as `llm`)."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.models.fake import FakeChatModel
from agentcli.schema import ChatResult, ToolCall

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


@contextlib.contextmanager
def _registered(module: types.ModuleType) -> Iterator[None]:
    sys.modules[module.__name__] = module
    try:
        yield
    finally:
        del sys.modules[module.__name__]


def test_readme_run_state_example(monkeypatch: pytest.MonkeyPatch) -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("**Run state.**"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    llm = FakeChatModel([
        ChatResult("", tool_calls=(ToolCall("c1", "open_ticket", '{"summary": "late"}'),)),
        "Opened.",
    ])
    module = types.ModuleType("readme_example")  # a real module: its type hints resolve
    import agentcli.models

    monkeypatch.setattr(agentcli.models, "get_model", lambda spec, **kw: llm)  # no Ollama here
    out = io.StringIO()
    with contextlib.redirect_stdout(out), _registered(module):
        exec(compile(code.group(1), "python-api.md", "exec"), module.__dict__)
    assert out.getvalue() == "T-1 for Ada: late\n"
    [schema] = [t["function"]["parameters"] for t in llm.requests[0].tools or []]
    assert "state" not in schema["properties"]  # injected, never shown to the model

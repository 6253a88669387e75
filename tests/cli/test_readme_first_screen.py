"""The README's first screens work as written: its Python example runs (a scripted model as
its `llm`), its docs links point at files that exist, and moved sections live in docs/."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from agentcli.models.fake import FakeChatModel

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_the_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text(encoding="utf-8")
    code = re.search(r"```python\n(from agentcli import .*?)```", text, re.S)
    assert code is not None
    llm = FakeChatModel(['{"action": "Calculator", "action_input": "300 * 0.25"}',
                         '{"action": "Final Answer", "action_input": "75"}'])
    import agentcli.models

    monkeypatch.setattr(agentcli.models, "get_model", lambda spec, **kw: llm)  # no Ollama here
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), "README.md", "exec"), {})
    assert out.getvalue() == "75\n"
    assert "Answer: 75" in str(llm.requests[-1].messages)  # the Calculator really ran


def test_every_relative_link_in_the_readme_and_docs_exists() -> None:
    for page in [README, *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text("utf-8")):
            if not target.startswith(("http://", "https://", "mailto:")):
                assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_readme_starts_short() -> None:
    text = README.read_text(encoding="utf-8")
    head = text.split("## Commands", 1)[0]
    assert len(head.splitlines()) < 150  # quick start, real model, one example per job
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/agent run" in head
    for moved in ("## Speed", "## Layout", "### Small local models", "| LangChain | agentcli |"):
        assert moved not in text
    assert "| LangChain | agentcli |" in (ROOT / "docs" / "langchain.md").read_text("utf-8")

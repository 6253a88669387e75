"""Nothing a config sets is process-wide: two executors built from different configs in one
process (a library user, a batch with profiles) keep their own prompt, prices and tools, even
when they run at the same time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentcli.config import Settings
from agentcli.events import ModelEnd
from agentcli.models.fake import FakeChatModel
from agentcli.runtime import build_executor

MODULE = '''
from agentcli import tool

@tool
def {name}(text: str) -> str:
    """Answer with the tool's own name."""
    return "{name} says " + text
'''

PROMPT = (Path(__file__).parents[2] / "agentcli/agents/prompts/react.txt").read_text()


def settings_for(tmp_path: Path, name: str, price: float) -> Settings:
    module = tmp_path / f"{name}.py"
    module.write_text(MODULE.format(name=name))
    prompt = tmp_path / f"{name}.txt"
    prompt.write_text(f"You are agent {name}.\n" + PROMPT)
    prices = tmp_path / f"{name}-prices.yaml"
    prices.write_text(f"fake:\n  m: {{input: {price}, output: {price}}}\n")
    return Settings(model="fake/m", agent="zero-shot-react-description", tools=[name],
                    tools_module=[str(module)], prompt_file=str(prompt), prices=str(prices),
                    max_cost=1000.0)


def test_two_configs_in_one_process_stay_independent(tmp_path: Path) -> None:
    runs: dict[str, Any] = {}
    gate = asyncio.Event()

    def reply_for(name: str) -> Any:
        def reply(messages: list[Any]) -> str:
            if f"{name} says" not in messages[-1].content:
                return f"Thought: use it\nAction: {name}\nAction Input: hi"
            return "Thought: done\nFinal Answer: ok"
        return reply

    async def one(name: str, price: float) -> None:
        settings = settings_for(tmp_path, name, price)
        llm = FakeChatModel(reply_for(name), name="fake/m")
        executor = build_executor(settings, llm)
        if name == "alpha":
            await gate.wait()  # alpha starts once beta is built: both configs are live at once
        else:
            gate.set()
        events = [e async for e in executor.astream("question")]
        runs[name] = (llm, executor, events)

    async def both() -> None:
        await asyncio.gather(one("alpha", 1.0), one("beta", 100.0))

    asyncio.run(both())
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        llm, executor, events = runs[name]
        prompt = llm.requests[0].messages[0].content
        assert prompt.startswith(f"You are agent {name}.") and other not in prompt
        assert [t.name for t in executor.tools] == [name]
        result = events[-1].result
        assert result.output == "ok" and result.steps[0].observation == f"{name} says hi"
    costs = {n: [e.cost for e in runs[n][2] if isinstance(e, ModelEnd)] for n in runs}
    assert all(c is not None and c > 0 for c in costs["alpha"] + costs["beta"])
    assert costs["beta"][0] > 50 * costs["alpha"][0]  # each run priced by its own table

"""The compact prompt variant: style selection, file choice, and that it is filled and short."""

from __future__ import annotations

import re

import pytest

from agentcli.agents.prompt_style import (
    compact_values,
    model_size_b,
    prompt_name,
    resolve_style,
    short_description,
    tool_lines,
)
from agentcli.agents.prompts import load, placeholders, render
from agentcli.answers import Given, judge
from agentcli.tools.base import Tool

BASES = ["react", "chat_system", "structured_chat_system", "chat_conversational_system"]


def five_tools() -> list[Tool]:
    long = "Search the encyclopedia for a topic. " + "It returns summaries of pages. " * 8
    args = {"type": "object", "properties": {"path": {"type": "string"},
                                             "limit": {"type": "integer"}}}
    return [Tool("Calculator", "Evaluate arithmetic safely. Uses numexpr.", lambda s: s),
            Tool("wikipedia", long, lambda s: s),
            Tool("current_datetime", "The current date and time.", lambda s: s),
            Tool("read_file", "Read a file under the root.", lambda **kw: "", args_schema=args),
            Tool("list_directory", "List a directory under the root.", lambda s: s)]


@pytest.mark.parametrize(("name", "size"), [
    ("llamacpp/SmolLM2-135M-Instruct", 0.135), ("ollama/qwen2.5:0.5b", 0.5),
    ("ollama/llama3.1:8b", 8.0), ("vllm/Qwen/Qwen2.5-1.5B-Instruct", 1.5),
    ("openai/gpt-4o-mini", None), ("llamacpp/smollm2", None), ("x/gemma-3-270m-it", 0.27),
])
def test_model_size_from_the_name(name: str, size: float | None) -> None:
    assert model_size_b(name) == size


def test_auto_style_by_size_then_by_locality() -> None:
    assert resolve_style("auto", "ollama/qwen2.5:0.5b") == "compact"
    assert resolve_style("auto", "ollama/llama3.1:8b", local=True) == "full"
    assert resolve_style("auto", "llamacpp/smollm2", local=True) == "compact"
    assert resolve_style("auto", "openai/gpt-4o-mini") == "full"
    assert resolve_style("full", "x/tiny-135m") == "full"
    assert resolve_style("auto", "x/phi-3.8b", compact_below_b=2.0) == "full"


def test_prompt_name_falls_back_to_the_full_file() -> None:
    assert prompt_name("chat_system", "compact") == "chat_system_compact"
    assert prompt_name("chat_system", "full") == "chat_system"
    assert prompt_name("self_ask", "compact") == "self_ask"  # no compact variant


@pytest.mark.parametrize("base", BASES)
def test_compact_prompts_are_filled_and_much_shorter(base: str) -> None:
    tools = five_tools()
    values = {**compact_values(tools), "input": "What is 2 + 2?", "agent_scratchpad": ""}
    compact = render(load(prompt_name(base, "compact")), **values)
    assert not re.search(r"\{[a-z_]+\}", compact), compact  # every placeholder filled
    assert "read_file(path, limit)" in compact and "Calculator" in compact
    full = render(load(base), tools=tool_lines(tools), tool_names="x", input="",
                  agent_scratchpad="")
    assert len(compact) < 0.75 * len(full)
    assert len(compact) / 4 < 400  # far inside a 2,048-token context


@pytest.mark.parametrize("with_calculator", [True, False])
def test_the_example_shows_no_result_to_copy(with_calculator: bool) -> None:
    """SmolLM2 answered unrelated questions with the worked example's `42` (later `10.73`):
    the example shows the question and its calculation, never a result, and what stands for
    the result is a placeholder the answer rule refuses when copied (no value is refused)."""
    tools = five_tools() if with_calculator else [
        Tool("search", "Search. Input: what to look up.", lambda s: s)]
    values = {**compact_values(tools), "input": "q", "agent_scratchpad": ""}
    given = Given("How many legs does a spider have?", placeholders=placeholders())
    for base in BASES:
        text = render(load(prompt_name(base, "compact")), **values)
        if not with_calculator:  # no worked example to copy: a placeholder one is copied
            assert "Example:" not in text and "<tool name>" not in text
            assert "Input: what to look up." in text  # the tool's input hint is kept
            continue
        example = text[text.index("Example:"):]
        answers = re.findall(r'Final Answer(?::|", "action_input":) "?([^"\n]+)', example)
        assert answers == ["<the result>"], example
        observation = re.search(r"Observation: Answer: (.+)", example)
        assert observation is not None and observation.group(1) == "<the result>"
        assert not re.search(r"\d", answers[0] + observation.group(1))  # no value at all
        for copied in (answers[0], "the result", "`<the result>`."):
            assert judge(copied, given).reason == "placeholder", copied
        assert "Calculator" in example and "3.7 * 2.9" in example


def test_short_description_keeps_the_first_sentence() -> None:
    assert short_description("Do math. Safely, with numexpr.") == "Do math."
    assert len(short_description("word " * 50)) <= 80

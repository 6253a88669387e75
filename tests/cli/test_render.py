"""The Rich trace: each part in its own colour, each tool in a stable colour."""

from __future__ import annotations

import io

from rich.console import Console

from agentcli.cli.render import STYLES, TraceRenderer, print_answer, thought_of, tool_style
from agentcli.events import ActionEvent, Finish, Observation
from agentcli.schema import AgentAction, AgentFinish, AgentStep


def console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, color_system="truecolor", width=120), buf


def test_trace_parts_have_distinct_colours() -> None:
    assert len({STYLES[k] for k in ("thought", "action", "observation", "answer")}) == 4
    con, buf = console()
    handler = TraceRenderer(con)
    action = AgentAction("Calculator", "300 * 0.25", "Thought: use it\nAction:")
    handler.on_event(ActionEvent(action))
    handler.on_event(Observation(AgentStep(action, "Answer: 75.0")))
    handler.on_event(Finish(AgentFinish({"output": "75"}, "Thought: done\nFinal Answer: 75")))
    out = buf.getvalue()
    for text in ("Thought: ", "use it", "Action: ", "Calculator", "Observation: ", "Answer: 75.0",
                 "Final Answer: ", "75"):
        assert text in out
    assert out.count("\x1b[") >= 8


def test_tool_colour_is_stable_and_varies() -> None:
    assert tool_style("Calculator") == tool_style("Calculator")
    assert len({tool_style(n) for n in ("a", "b", "c", "d", "e", "wikipedia", "terminal")}) > 1


def test_thought_extraction() -> None:
    assert thought_of("Thought: I need maths\nAction:\n```json\n{}\n```") == "I need maths"
    assert thought_of("The sum is 4.\n\nFinal Answer: 4") == "The sum is 4."
    assert thought_of("Action: Calculator\nAction Input: 2") == ""


def test_answer_markdown_in_terminal_plain_when_piped() -> None:
    con, buf = console()
    print_answer(con, "**75**")
    assert "**" not in buf.getvalue()
    plain = io.StringIO()
    print_answer(Console(file=plain, force_terminal=False), "**75** [not markup]")
    assert plain.getvalue() == "**75** [not markup]\n"

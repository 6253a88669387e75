"""The Rich trace: each part in its own colour, each tool in a stable colour."""

from __future__ import annotations

import io
import re

from rich.console import Console

from agentcli.cli.render import STYLES, TraceRenderer, print_answer, thought_of, tool_style
from agentcli.events import ActionEvent, Finish, Limit, Notice, Observation, ParseError
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
    print_answer(con, "# 75\n\n- **75**\n- 76")  # block structure: rendered
    assert "**" not in buf.getvalue() and "#" not in buf.getvalue()
    con, buf = console()
    print_answer(con, "**75**")  # inline emphasis alone: shown as written
    assert "**75**" in buf.getvalue()
    plain = io.StringIO()
    print_answer(Console(file=plain, force_terminal=False), "**75** [not markup]")
    assert plain.getvalue() == "**75** [not markup]\n"


def _trace(out: Console) -> None:
    """Every kind of line the trace draws, with text Rich would and would not change."""
    handler = TraceRenderer(out)
    for i, text in enumerate(["use it", "a\tb", "x: y :smile:", "[bold]no[/bold]", "naïve ☃",
                              "two\nlines", "esc\x1b[2J", "w " * 60]):
        action = AgentAction(f"tool{i}", text if i % 2 else {"q": text}, f"Thought: {text}\n")
        handler.on_event(ActionEvent(action))
        handler.on_event(Observation(AgentStep(action, text)))
        handler.on_event(ParseError(AgentStep(action, text)))
        handler.on_event(Notice("topic", text))
        handler.on_event(Finish(AgentFinish({"output": text}, f"Thought: {text}?\n")))
    handler.on_event(Limit("max_iterations"))
    TraceRenderer(out, answer="label").on_event(Finish(AgentFinish({"output": "75"}, "")))


def test_a_piped_trace_is_written_as_rich_draws_it() -> None:
    for wrap in (True, False):
        fast = io.StringIO()
        piped = Console(file=fast)
        piped.soft_wrap = wrap
        _trace(piped)
        drawn = Console(file=io.StringIO())
        drawn.soft_wrap = wrap
        with drawn.capture() as captured:  # capturing: every line goes through Rich
            _trace(drawn)
        assert fast.getvalue() == captured.get()
        assert "Action: tool0  input: " in fast.getvalue() and "\x1b" not in fast.getvalue()


def test_an_action_line_is_bold_throughout_in_a_terminal() -> None:
    con, buf = console()
    TraceRenderer(con).on_event(ActionEvent(AgentAction("Calculator", "300 * 0.25", "")))
    line = buf.getvalue().strip()
    codes = re.findall(r"\x1b\[([0-9;]*)m", line)
    drawn = [c for c in codes if c != "0"]  # every part's style, resets aside
    assert len(drawn) == 4 and all(c.split(";")[0] == "1" for c in drawn), line

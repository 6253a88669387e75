"""The chat's token printer: words stream live, raw action blobs never reach the screen."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from agentcli import events as ev
from agentcli.cli.live import TokenPrinter
from agentcli.schema import ChatRequest, ChatResult


def feed(tokens: list[str]) -> tuple[str, TokenPrinter]:
    buf = StringIO()
    printer = TokenPrinter(Console(file=buf, width=200))
    printer.on_event(ev.ModelStart(ChatRequest(()), "m"))
    for token in tokens:
        printer.on_event(ev.ModelToken(token))
    printer.on_event(ev.ModelEnd(ChatResult("".join(tokens)), "m", 0.0))
    return buf.getvalue(), printer


def test_thought_streams_and_action_is_held_back() -> None:
    out, printer = feed(["Thought: I need", " the calc", "ulator.\nAct", "ion:\n```\n{",
                         '"action": "Calculator"}\n```'])
    assert out == "Thought: I need the calculator.\n"
    assert printer.streamed and not printer.answer_streamed


def test_json_blob_without_thought_prints_nothing() -> None:
    out, printer = feed(['{"act', 'ion": "Final Answer", "action_input": "hi"}'])
    assert out == "" and not printer.streamed


def test_final_answer_streams_whole() -> None:
    out, printer = feed(["Final ", "Answer: ", "75 ", "apples"])
    assert out == "Final Answer: 75 apples\n"
    assert printer.answer_streamed


def test_text_that_only_looks_like_a_marker_is_released() -> None:
    out, _ = feed(["Actually, ", "Act", "ors act."])
    assert out == "Actually, Actors act.\n"


def held(tokens: list[str], question: str, *, native: bool = False) -> tuple[str, TokenPrinter]:
    from agentcli.agents.prompts import placeholders
    from agentcli.answers import Given

    buf = StringIO()
    printer = TokenPrinter(Console(file=buf, width=200))
    printer.given, printer.native = Given(question, placeholders=placeholders()), native
    printer.on_event(ev.ModelStart(ChatRequest(()), "m"))
    for token in tokens:
        printer.on_event(ev.ModelToken(token))
    printer.on_event(ev.ModelEnd(ChatResult("".join(tokens)), "m", 0.0))
    return buf.getvalue(), printer


def test_an_answer_the_rule_refuses_never_streams() -> None:
    """Issue 39: the words of a refused reply are held back (the answer rule judges them)."""
    out, printer = held(["Thought: easy.\nFinal ", "Answer: 4 ", "hours"],
                        "How many minutes are in 4 hours?")
    assert out.strip() == "Thought: easy." and not printer.answer_streamed
    out, _ = held(['{"name": "terminal", ', '"arguments": {}}'], "Hi?", native=True)
    assert out == ""
    out, printer = held(["Final ", "Answer: 240 ", "minutes"], "How many minutes are in 4 hours?")
    assert out == "Final Answer: 240 minutes\n" and printer.answer_streamed

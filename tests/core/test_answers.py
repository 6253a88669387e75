"""The answer rule (``agentcli.answers.judge``) as a pure function, and on the library API:
``AgentExecutor.invoke/ainvoke/stream``, ``initialize_agent`` and ``create_agent``."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentcli.agents.prompts import placeholders
from agentcli.answers import Given, is_calculation, judge
from agentcli.create import create_agent, initialize_agent
from agentcli.events import ActionEvent, End, Observation
from agentcli.models.fake import FakeChatModel
from agentcli.schema import ChatResult, ToolCall
from agentcli.tools.calculator import DESCRIPTION, make_calculator
from agentcli.tools.math_words import ACCEPTED_FORMS

MINUTES = "How many minutes are in 4 hours?"
HINT = f"Error: the Calculator cannot read 'x'; write the calculation itself: {ACCEPTED_FORMS}"
BLOB = json.dumps({"name": "terminal", "arguments": {"command": "ls"}})


def reason(reply: str, question: str = MINUTES, **given: tuple[str, ...]) -> str | None:
    return judge(reply, Given(question, placeholders=placeholders(), **given)).reason


@pytest.mark.parametrize(("reply", "question"), [
    ("10.73", "What is 3.7 times 2.9?"),  # never refused for its value
    ("The answer is 10.73.", "What is 3.7 times 2.9?"),
    ("240", MINUTES),
    ("Tokyo", "Which city is bigger, Tokyo or Paris?"),  # a choice adds the choice
    ("No.", "Is 7 an even number?"),
    ("1/3", "What fraction of the pie is left?"),  # a fraction, not a calculation
    ("2024-01-15", "When was it?"),
    ("👍", "Did it work?"),
    ("The file is empty.", "Is the file empty?"),  # a statement answers a yes/no question
    ("1, 2, 3", "Sort 3, 1, 2."),  # a reordering adds the order
    ("hi", "Say hi"),  # an instruction may ask for its own words
    ("**75**", "What is 25% of 300?"),  # Markdown bold is no calculation
    ("9", "What is the largest of 3, 9 and 4?"),  # one item of a list is a choice
    ("horse", "Which word is longest: cat, horse, ox?"),
    ("3", "What is the smallest of 3, 9 and 4?"),
    ("1990", "What is the year in 'born in 1990'?"),  # drawn from a quoted passage
    ("42", "Report\nTotal: 42\n\nWhat is the total?"),  # from piped text or a fragment
    ("Answer: 240", MINUTES), ("<b>240</b>", MINUTES), ("A dog.", "What barked?"),
])
def test_answers(reply: str, question: str) -> None:
    assert reason(reply, question, tool_texts=(DESCRIPTION,)) is None


@pytest.mark.parametrize(("reply", "why"), [
    ("", "empty"), ("  \n ", "empty"), ("\u200b", "empty"), ("\u2060\ufeff\u200b", "empty"),
    ("\x1b[2K\x1b[1G", "empty"), ("\x1b]0;title\x07", "empty"), ("...", "empty"),
    (BLOB, "tool_call"),
    (f"Let me check.\n```json\n{BLOB}\n```", "tool_call"),
    ('{"action": "Calculator", "action_input": "2 + 2"}', "tool_call"),
    ("<tool_call>", "tool_call"), ("Action: Calculator\nAction Input: 2", "tool_call"),
    ("your answer to the user", "placeholder"), ("Your reply to the human.", "placeholder"),
    ("<the result>", "placeholder"),
    ("4 hours", "question"), (f'"{MINUTES}"', "question"), ("minutes", "question"),
    ("minutes in 4 hours", "question"), ("How many minutes", "question"),
    ("300 - (1/3 * 300) - 20", "calculation"), ("3.7*2.9 =", "calculation"),
    ("arithmetic with + - * / ** and parentheses, or math words (", "tool_text"),
    ("Final Answer: 4 hours", "question"), (f"Q: {MINUTES}", "question"),
    (f"The answer is: {MINUTES}", "question"),
    ("<answer>4 hours</answer>", "question"), ("<answer></answer>", "empty"),
])
def test_not_answers(reply: str, why: str) -> None:
    assert reason(reply, tool_texts=(DESCRIPTION, HINT)) == why


@pytest.mark.parametrize(("reply", "question"), [
    ("4 hours", "Give me the minutes, please: how many are in 4 hours, 2 days?"),
    ("largest of 3", "What is the largest of 3, 9 and 4?"),  # more than one item
    ("4 hours", f"Context: none.\n\n{MINUTES}"),  # the question's own paragraph
    ("What's the year", "What's the year in 'born in 1990'?"),  # not from the quoted part
    ("4 hours", f"{MINUTES}\n\nAnswer briefly."),  # a question piped in is asked, not given
    ("4 hours", f'Answer this: "{MINUTES}"'),
    ("4 blue", "A box has 6 red, 4 blue and 5 green balls. How many balls?"),  # a phrase
])
def test_material_and_lists_leave_restatements_refused(reply: str, question: str) -> None:
    assert reason(reply, question) == "question"


def test_tool_text_is_only_a_copy_of_several_words() -> None:
    """One or two words, or only numbers, are never taken for a copy of a tool's text."""
    assert reason("no facts", tool_texts=(DESCRIPTION,)) is None
    assert reason("2 000", tool_texts=("Error: at most 2,000 characters 2000",)) is None
    error = ("Error: at most 2,000 characters",)
    assert reason("at most 2,000 characters", tool_texts=error) == "tool_text"
    assert reason("at most characters", tool_texts=error) is None  # not a piece of it
    long_help = ("Read the complete contents of a file from the file system; says if the "
                 "file cannot be read or is empty.",)
    assert reason("The file is empty.", tool_texts=long_help) is None  # its words, no copy


def test_a_result_held_by_a_tool_is_an_answer_though_the_question_holds_it() -> None:
    assert reason("5", "What is 5 times 1?") == "question"
    assert reason("5", "What is 5 times 1?", results=("Answer: 5",)) is None


def test_is_calculation() -> None:
    assert is_calculation("300 - (1/3 * 300) - 20") and is_calculation("`2 ** 10`")
    assert not any(map(is_calculation, ["-5", "1/3", "10.73", "2024-01-15", "(5)", "= 180",
                                        "300 - 120 = 180", "15% of 80", "**75**",
                                        "*-5*", "(**2**)"]))
    assert is_calculation("(2*3)") and is_calculation("**2 ** 10**")


def test_a_calculation_is_read_as_the_loaded_calculator_reads_it() -> None:
    from agentcli.tools.math_words import notation

    for reply in ("3 × 4", "12 ÷ 4", "$300 - $100", "1,000 + 200", "= 300 - 100", "4,500 * 1.2"):
        assert is_calculation(reply, notation), reply
    assert not is_calculation("3 × 4")  # no Calculator loaded: nothing reads its symbols
    for reply in ("1,000", "$300", "4 hours", "2024-01-15", "9-5", "**75**", "5 times 6",
                  "How many minutes are in 4 hours?"):  # words are never a bare calculation
        assert not is_calculation(reply, notation), reply


def test_a_slot_in_the_placeholder_notation_is_no_answer() -> None:
    assert reason("<the answer to the question>", "What is 2+2?") == "placeholder"
    assert reason("<b>4</b>", "What is 2+2?") is None and reason("4 < 5 > 3", "Is 4 < 5?") is None


def test_an_echoed_input_is_no_result() -> None:
    from agentcli.answers import echoes

    assert echoes("65", "Answer: 65.0") and echoes({"input": "65"}, "Answer: 65")
    assert not echoes("7 * 1", "Answer: 7") and not echoes("sales.txt", "Total: 42")


def test_placeholders_come_from_the_prompt_files() -> None:
    found = placeholders()
    assert {"your answer to the user", "your answer to the original question",
            "the result"} <= found
    assert not any(any(c.isdigit() for c in p) for p in found)  # never a value
    assert "yes" not in found and "no" not in found  # a lone word is an answer


def blob_agent(*replies: str | ChatResult) -> FakeChatModel:
    return FakeChatModel(list(replies))


def test_initialize_agent_returns_none_for_a_blob() -> None:
    model = blob_agent(BLOB, BLOB)
    result = initialize_agent([], model, "tool-calling").invoke(MINUTES)
    assert result["output"] is None and result.stop_reason == "no_answer"
    assert len(model.requests) == 2 and not model.requests[1].tools  # the answer-now request


def test_initialize_agent_takes_the_answer_given_when_asked() -> None:
    result = initialize_agent([], blob_agent(BLOB, "240"), "tool-calling").invoke(MINUTES)
    assert result["output"] == "240"


def test_ainvoke_and_stream_apply_the_rule() -> None:
    executor = initialize_agent([], blob_agent(f'Final Answer: "{MINUTES}"',
                                           "Final Answer: 4 hours"),
                                "zero-shot-react-description")
    assert asyncio.run(executor.ainvoke(MINUTES))["output"] is None
    executor = initialize_agent([], blob_agent("\u200b", "\x1b[2K"), "tool-calling")
    events = list(executor.stream(MINUTES))
    end = events[-1]
    assert isinstance(end, End) and end.result.output is None


def test_create_agent_keeps_no_blob_as_the_answer() -> None:
    model = blob_agent(BLOB, BLOB)
    state = create_agent(model).invoke({"messages": [{"role": "user", "content": MINUTES}]})
    assert all(BLOB not in str(m.content) for m in state["messages"])


def test_create_agent_keeps_the_answer_given_when_asked() -> None:
    """The answer-now reply is the state's last message, as any answer is."""
    model = blob_agent(BLOB, "240")
    state = create_agent(model).invoke({"messages": [{"role": "user", "content": MINUTES}]})
    assert [(m.role, m.content) for m in state["messages"][1:]] == [("assistant", "240")]
    assert len(model.requests) == 2 and not model.requests[1].tools


def test_create_agent_judges_against_the_users_question() -> None:
    """A question given as messages (no ``input``) is the one a restatement copies."""
    model = blob_agent("4 hours", "4 hours")
    state = create_agent(model).invoke({"messages": [{"role": "user", "content": MINUTES}]})
    assert [m.role for m in state["messages"]] == ["user"]  # no answer kept
    assert len(model.requests) == 2  # the one answer-now request


def test_the_library_runs_a_bare_calculation_through_the_calculator() -> None:
    model = blob_agent(ChatResult("300 - (1/3 * 300) - 20"), "180")
    calculator = make_calculator(model)
    executor = initialize_agent([calculator], model, "tool-calling")
    events = list(executor.stream("How much is left?"))
    (action,) = [e.action for e in events if isinstance(e, ActionEvent)]
    assert (action.tool, action.tool_input) == ("Calculator", "300 - (1/3 * 300) - 20")
    (seen,) = [e for e in events if isinstance(e, Observation)]
    assert seen.step.observation == "Answer: 180.0"
    end = events[-1]
    assert isinstance(end, End) and end.result.output == "180"
    sent = model.requests[1].messages
    calls = [m.tool_calls for m in sent if m.role == "assistant"]
    assert calls and isinstance(calls[0][0], ToolCall)  # given back as a tool result
    assert any(m.role == "tool" and m.content == "Answer: 180.0" for m in sent)


# -- where agentcli.compat keeps LangChain's behaviour (docs/langchain.md, "Answers") --------
def test_kept_force_at_a_limit_returns_langchains_sentence() -> None:
    from agentcli.schema import FORCE_STOP_MESSAGE

    model = blob_agent(*["Thought: again\nAction: Calculator\nAction Input: 2 + 2"] * 3)
    executor = initialize_agent([make_calculator(model)], model, "zero-shot-react-description",
                                max_iterations=2, stall_limit=None)
    result = executor.invoke("What is 2 + 2?")
    assert result["output"] == FORCE_STOP_MESSAGE and result.stop_reason == "max_iterations"
    assert len(model.requests) == 2  # no further request


def test_kept_create_agent_ends_on_an_empty_reply_after_tool_results() -> None:
    """LangGraph's graph ends on an AI message without tool calls (seed 004)."""
    model = blob_agent(ChatResult("", tool_calls=(ToolCall("c1", "Calculator",
                                                           '{"input": "2 + 2"}'),)), "")
    state = create_agent(model, [make_calculator(model)]).invoke(
        {"messages": [{"role": "user", "content": "What is 2 + 2?"}]})
    assert len(model.requests) == 2  # no answer-now request
    assert [(m.role, m.content) for m in state["messages"]][-2:] == [("tool", "Answer: 4"),
                                                                      ("assistant", "")]


def test_settled_shows_text_only_once_it_adds_something() -> None:
    """What a stream may show before the rule judged the whole reply (agent serve)."""
    from agentcli.answers import settled

    given = Given(MINUTES, placeholders=placeholders())
    assert settled("4 hours", given) == 0  # a restatement so far
    assert settled("4 hou", given) == 0  # a word still arriving may become the question's
    # ... but one that begins no word of the question, a placeholder, a label or a tool's
    # text is new whatever follows: it shows as it arrives, not with the next token
    assert settled("Four hours hold two hun", given) == len("Four hours hold two hun")
    assert settled("Four hours hold 240 minu", given) == len("Four hours hold 240")
    assert settled("Twen", given) == len("Twen")
    assert settled("Fin", given) == 0  # may become the label "Final Answer:"
    assert settled("Act", given) == 0  # may become an "Action:" line
    assert settled("24", given) == 0  # more digits may make it a number of the question
    assert settled("Twen", Given(MINUTES, ("Twenty questions",))) == 0  # a tool's word
    assert settled("your answer to", given) == 0  # may become a placeholder
    assert settled("300 - 20", given) == 0  # may be a bare calculation
    assert settled("Final Answer: 4 hours", given) == 0  # a label adds no word
    assert settled("That is 240 min", given) == len("That is 240")
    assert settled("Sure. ```json\n{", given) == len("Sure. ")  # held from a call's start


def test_leaving_a_stream_early_is_quiet() -> None:
    """A ``break`` out of ``executor.stream()`` closed the run's generator, which caught the
    GeneratorExit and went on yielding: Python printed "Exception ignored ... async generator
    ignored GeneratorExit" with a traceback on stderr."""
    import subprocess
    import sys

    script = (
        "from agentcli.create import initialize_agent\n"
        "from agentcli.models.fake import FakeChatModel\n"
        "ex = initialize_agent([], FakeChatModel(['hello there']), 'tool-calling')\n"
        "for event in ex.stream('hi?'):\n"
        "    break\n"
        "import gc; gc.collect()\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n"
    assert done.stderr == ""

"""Output parsers: recorded messy replies, properties on arbitrary text, and a time guard."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.agents.conversational import ConversationalOutputParser
from agentcli.agents.parsers import (
    AgentOutputParser,
    JsonBlobOutputParser,
    ReActOutputParser,
    maybe_json,
)
from agentcli.agents.self_ask import SelfAskOutputParser
from agentcli.errors import OutputParserError
from agentcli.schema import AgentAction, AgentFinish

DATA = Path(__file__).resolve().parent.parent / "data"
PARSERS: dict[str, AgentOutputParser] = {
    "react_outputs.jsonl": ReActOutputParser(),
    "json_blob_outputs.jsonl": JsonBlobOutputParser(),
}

ALL_PARSERS: list[AgentOutputParser] = [
    *PARSERS.values(), ConversationalOutputParser(), SelfAskOutputParser("search"),
]


def _cases() -> list[Any]:
    out = []
    for name in PARSERS:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            out.append(pytest.param(name, case, id=f"{name.split('_')[0]}-{case['id']}"))
    return out


@pytest.mark.parametrize(("file", "case"), _cases())
def test_recorded_reply(file: str, case: dict[str, Any]) -> None:
    parser, expect, text = PARSERS[file], case["expect"], case["text"]
    if expect["type"] == "error":
        with pytest.raises(OutputParserError) as info:
            parser.parse(text)
        assert info.value.llm_output == text
        assert info.value.observation
        return
    result = parser.parse(text)
    assert result.log == text
    if expect["type"] == "finish":
        assert isinstance(result, AgentFinish), result
        assert result.output == expect["output"]
    else:
        assert isinstance(result, AgentAction), result
        assert (result.tool, result.tool_input) == (expect["tool"], expect["tool_input"])


def test_each_file_has_150_cases_with_unique_ids() -> None:
    for name in PARSERS:
        cases = [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines()]
        assert len(cases) >= 150
        assert len({c["id"] for c in cases}) == len(cases)
        hand = [c for c in cases if not c["id"].startswith("derived-")]
        assert len(hand) >= 100


def test_refused_cases_are_documented() -> None:
    refused_doc = (DATA.parent.parent / "bench" / "REFUSED.md").read_text(encoding="utf-8")
    for name in PARSERS:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if case.get("refused"):
                assert case["expect"]["type"] == "error"
                assert f"`{case['id']}`" in refused_doc, case["id"]


def test_error_observations_differ_by_format() -> None:
    errors = []
    for parser in PARSERS.values():
        with pytest.raises(OutputParserError) as info:
            parser.parse("Just some prose.")
        errors.append(info.value.observation)
    assert errors[0] != errors[1]
    assert "Action Input:" in errors[0]
    assert '"action_input"' in errors[1]


def test_missing_action_input_is_explained() -> None:
    with pytest.raises(OutputParserError) as info:
        ReActOutputParser().parse("Thought: go\nAction: search")
    assert "Action Input" in str(info.value.observation)
    assert "search" in str(info.value.observation)


def test_react_input_stays_a_string_and_json_input_becomes_a_dict() -> None:
    text = 'Action: weather\nAction Input: {"city": "Rome"}'
    assert ReActOutputParser().parse(text) == AgentAction("weather", '{"city": "Rome"}', text)
    assert JsonBlobOutputParser().parse(text) == AgentAction("weather", {"city": "Rome"}, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("{'a': True,}", {"a": True}),
        ('```json\n[1, 2]\n```', [1, 2]),
        ('"{\\"a\\": 1}"', {"a": 1}),
        ("plain words", "plain words"),
        ('{"a": 1} and more', '{"a": 1} and more'),
        ("42", "42"),
        ('"hello"', '"hello"'),
    ],
)
def test_maybe_json(text: str, expected: Any) -> None:
    assert maybe_json(text) == expected


_FRAGMENTS = st.sampled_from([
    "Action:", "Action Input:", "Final Answer:", "Thought:", "Observation:", "**", "```json",
    "```", "~~~", "{", "}", "[", "]", '"', "'", ",", ":", "\n", " ", "action", "action_input",
    '"action"', '"Final Answer"', "None", "<think>", "</think>", "search", "(", ")", "\\", "：",
    "1", "True", "//", "/*", "#", "<|im_end|>", "最终答案",
])
_REPLIES = st.one_of(st.text(max_size=300), st.lists(_FRAGMENTS, max_size=60).map("".join))


@settings(max_examples=300, deadline=None)
@given(_REPLIES)
def test_any_text_gives_a_step_or_a_parser_error(text: str) -> None:
    for parser in ALL_PARSERS:
        try:
            result = parser.parse(text)
        except OutputParserError as exc:
            assert exc.llm_output == text
            continue
        assert isinstance(result, (AgentAction, AgentFinish))
        assert result.log == text
        if isinstance(result, AgentAction):
            assert isinstance(result.tool_input, (str, dict))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_maybe_json_never_raises(text: str) -> None:
    assert isinstance(maybe_json(text), (str, dict, list))


def adversarial_outputs() -> list[str]:
    """Replies built to make a parser backtrack or recurse (tests/data; bench/parser_speed.py
    times the same ones)."""
    out = []
    for line in (DATA / "adversarial_outputs.jsonl").read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        tail = e.get("suffix_unit", "") * e["times"] + e.get("suffix", "")
        out.append(e.get("prefix", "") + e["unit"] * e["times"] + tail)
    return out


_ADVERSARIAL = adversarial_outputs()
# A guard against runaway parsing (catastrophic backtracking takes minutes), generous enough
# for a loaded machine; the real speed budget (50 ms per 10 KB) is bench/parser_speed.py's.
_RUNAWAY = 5.0


@pytest.mark.parametrize("text", _ADVERSARIAL, ids=lambda t: repr(t[:16]))
def test_adversarial_input_ends_in_a_result_or_a_parse_error(text: str) -> None:
    for parser in ALL_PARSERS:
        try:
            parsed = parser.parse(text)
        except OutputParserError as err:
            assert err.observation  # what the model is told
        else:
            assert isinstance(parsed, AgentAction | AgentFinish)


def _best_of_three(parser: AgentOutputParser, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        with contextlib.suppress(OutputParserError):
            parser.parse(text)
        best = min(best, time.perf_counter() - started)
    return best


_LONG = st.one_of(
    st.text(min_size=1000, max_size=10_000),
    st.lists(_FRAGMENTS, min_size=200, max_size=3000).map("".join),
)


@settings(max_examples=60, deadline=None)
@given(_LONG)
def test_parsing_long_text_does_not_run_away(text: str) -> None:
    for parser in ALL_PARSERS:
        assert _best_of_three(parser, text) < _RUNAWAY


@pytest.mark.parametrize("text", _ADVERSARIAL, ids=lambda t: repr(t[:16]))
def test_adversarial_input_does_not_run_away(text: str) -> None:
    for parser in ALL_PARSERS:
        assert _best_of_three(parser, text) < _RUNAWAY


@pytest.mark.parametrize("parser", list(PARSERS.values()))
def test_code_on_the_action_line_gets_a_hint(parser: AgentOutputParser) -> None:
    text = "Thought: compute\nAction: `df.describe()`\nAction Input: df"
    with pytest.raises(OutputParserError) as info:
        parser.parse(text)
    assert "is code, not a tool name" in info.value.observation
    assert "df.describe()" in info.value.observation


@pytest.mark.parametrize("text", [
    '{"action": "Final Answer", "action_input": "643 }',
    '```json\n{"action": "Final Answer", "action_input": "643',
])
def test_a_final_answer_cut_off_mid_string_is_a_parse_error(text: str) -> None:
    with pytest.raises(OutputParserError, match="cut off"):
        JsonBlobOutputParser().parse(text)


def test_a_final_answer_missing_only_its_closing_brace_is_kept() -> None:
    result = JsonBlobOutputParser().parse('{"action": "Final Answer", "action_input": "643"')
    assert isinstance(result, AgentFinish) and result.output == "643"


@pytest.mark.parametrize(("answer", "expected"), [
    ("1058 }\nThe answer is 1058. The question was: What is 46 * 23?\n```json\n{", "1058"),
    ('400" }\nYou can use the following JSON object', "400"),
    ("The set is {1, 2}", "The set is {1, 2}"),  # braces of its own: kept
    ('{"a": 1}', '{"a": 1}'),
])
def test_an_answer_that_ran_past_its_closing_brace_is_cut_there(answer: str,
                                                                   expected: str) -> None:
    """Small models under a JSON grammar forget the closing quote: the value then carries the
    brace and whatever they wrote after it. The answer is what came before the brace."""
    reply = json.dumps({"action": "Final Answer", "action_input": answer})
    result = JsonBlobOutputParser().parse(reply)
    assert isinstance(result, AgentFinish) and result.return_values["output"] == expected


@pytest.mark.parametrize("raw", [
    "Final Answer: 42", "Thought: I know it now\nFinal Answer: 42 apples.",
    "  Thought: done\n  Final Answer:  Paris  ", "Final Answer: the answer",
    "Final Answer: ...", "Final Answer:", "Thought: x\nFinal Answer: caf\u00e9 \u2026 ok",
])
def test_the_quick_final_answer_path_reads_like_the_full_parser(
        raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli.agents import parsers

    def read(text: str) -> object:
        try:
            return parsers.JsonBlobOutputParser().parse(text)
        except OutputParserError as err:
            return (str(err), err.observation)

    quick = read(raw)
    monkeypatch.setattr(parsers, "_clean_final", lambda text: None)
    assert read(raw) == quick


@pytest.mark.parametrize("escaped", [
    r"\ud83d\ude00 and a lone \ud800", r"caf\u00e9 \"q\" \\ \/ \n", r"\ud83d\ude00"])
def test_a_blob_string_with_escapes_reads_as_json_reads_it(escaped: str) -> None:
    blob = '{"action": "Search", "action_input": "' + escaped + '"}'
    expected = json.loads(blob)["action_input"]
    # One unquoted key makes the strict reader refuse it: the forgiving reader unescapes.
    step = JsonBlobOutputParser().parse(blob.replace('"action"', "action", 1))
    assert isinstance(step, AgentAction) and step.tool_input == expected

"""The answer part of streamed replies, fed token by token (`agentcli.serve.answer`)."""

from __future__ import annotations

from agentcli.redact import open_secret
from agentcli.serve.answer import AnswerStream


def feed(stream: AnswerStream, tokens: list[str]) -> list[str]:
    stream.start()
    out = [piece for t in tokens if (piece := stream.token(t))]
    end = stream.end()
    return [*out, end] if end else out


def test_a_json_blob_streams_its_action_input_escapes_split_anywhere() -> None:
    stream = AnswerStream(native=False, env={})
    blob = '{"action": "Final Answer", "action_input": "Say \\"hi\\"\\n\\u00e9t\\u00e9 now"}'
    pieces = feed(stream, [blob[i:i + 3] for i in range(0, len(blob), 3)])
    assert "".join(pieces) == 'Say "hi"\nété now'
    assert len(pieces) > 2


def test_thoughts_and_actions_never_stream() -> None:
    stream = AnswerStream(native=False, env={})
    action = 'Thought: compute.\nAction:\n```\n{"action": "Calculator", "action_input": "2"}\n```'
    assert feed(stream, list(action)) == []
    assert "".join(feed(stream, list("Thought: done.\nFinal Answer: four"))) == "four"
    assert stream.rest("four") == ""


def test_text_before_a_tool_call_is_set_apart_and_rest_fills_in() -> None:
    stream = AnswerStream(native=True, env={})
    assert "".join(feed(stream, ["Let me ", "check."])) == "Let me check."
    stream.start()  # the next reply streams nothing (e.g. a structured answer)
    assert stream.rest("It is 42.") == "\n\nIt is 42."


def test_only_words_that_may_become_a_key_are_held() -> None:
    env = {"OPENAI_API_KEY": "zq-secret-value"}
    assert open_secret("Twen", env) == 0
    assert open_secret("the zq-se", env) == len("zq-se")
    assert open_secret("use sk", env) == 2  # the start of a key shape
    stream = AnswerStream(native=True, env=env)
    pieces = feed(stream, ["key: zq", "-sec", "ret-val", "ue done"])
    assert "".join(pieces) == "key: *** done" and "zq" not in "".join(pieces)

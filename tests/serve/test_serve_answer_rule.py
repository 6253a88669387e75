"""`agent serve` applies the one answer rule (issue 39): a reply that is no answer gets the one
answer-now request, and is never sent as the assistant's answer with ``finish_reason: stop``."""

from __future__ import annotations

import json
import os
from typing import Any

from openai_clients import client

from agentcli.redact import is_secret_name

BLOB = json.dumps({"name": "terminal", "arguments": {"command": "ls"}})
MINUTES = "How many minutes are in 4 hours?"


def test_a_blob_then_a_restatement_is_no_answer(serve: Any, mock_server: Any) -> None:
    mock_server.add_reply(BLOB)
    mock_server.add_reply("4 hours")
    served = serve("--agent", "tool-calling")
    done = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": MINUTES}])
    choice = done.choices[0]
    assert choice.finish_reason == "length"
    assert choice.message.content is not None
    assert choice.message.content.startswith("Stopped: the model's reply held no answer")
    assert "terminal" not in choice.message.content
    assert (done.model_extra or {})["agent_stop_reason"] == "no_answer"
    sent = [r.body for r in mock_server.requests if r.path.endswith("/chat/completions")]
    assert len(sent) == 2 and "tools" not in sent[1]  # the one answer-now request


def test_the_answer_given_when_asked_is_the_completion(serve: Any, mock_server: Any) -> None:
    mock_server.add_reply("\u200b")
    mock_server.add_reply("240")
    served = serve("--agent", "tool-calling")
    done = client(served).chat.completions.create(
        model="agent", messages=[{"role": "user", "content": MINUTES}])
    assert done.choices[0].message.content == "240"
    assert done.choices[0].finish_reason == "stop"


def _stream(served: Any) -> tuple[str, str | None]:
    chunks = list(client(served).chat.completions.create(
        model="agent", stream=True, messages=[{"role": "user", "content": MINUTES}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, [c.choices[0].finish_reason for c in chunks if c.choices][-1]


def test_a_streamed_blob_or_restatement_never_reaches_the_client(serve: Any,
                                                                 mock_server: Any) -> None:
    """Streamed text is held back until it adds something: a blob or a restatement is not
    sent, then the answer given when asked is."""
    served = serve("--agent", "tool-calling")
    mock_server.add_reply(f"Let me see.\n```json\n{BLOB}\n```")
    mock_server.add_reply("4 hours is 240 minutes.")
    text, finish = _stream(served)
    assert "terminal" not in text and finish == "stop"
    assert text.endswith("4 hours is 240 minutes.")
    for _ in range(2):
        mock_server.add_reply("4 hours")
    text, finish = _stream(served)
    assert finish == "length" and "4 hours" not in text
    assert text.startswith("Stopped: the model's reply held no answer")


def test_a_new_word_streams_with_its_first_piece(serve: Any, mock_server: Any) -> None:
    """A word still arriving that can only become a word the question does not hold is sent
    as it arrives, not with the next token (the first token's latency); one that may still
    become the question's waits until it cannot."""
    # No known secret may begin inside these words (those hold a word back too): the
    # environment's secret-named values are blanked, the token starts with digits.
    token = "0123456789-serve-test-token"
    quiet = {name: "" for name in os.environ if is_secret_name(name)}
    served = serve("--agent", "tool-calling", extra_env={
        **quiet, "OPENAI_API_KEY": "sk-test", "AGENT_SERVE_TOKEN": token})
    mock_server.add_reply("Seventy-five.")  # streamed as "Seve", "nty-", "five", "."
    mock_server.add_reply("Percentage: 75%.")  # "Perc" may still become the question's word
    first = []
    for _ in range(2):
        chunks = client(served, token).chat.completions.create(
            model="agent", stream=True,
            messages=[{"role": "user", "content": "What percent is 75 of 100?"}])
        pieces = [c.choices[0].delta.content for c in chunks
                  if c.choices and c.choices[0].delta.content]
        first.append(pieces[0])
    assert first == ["Seve", "Percenta"]  # "Perc" waited until it could not

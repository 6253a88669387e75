"""What happens with no model configured: a local Ollama, else the offline demo replay.

Imported by every run (to decide): what only the demo uses loads when it runs."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.models.base import BaseChatModel
    from agentcli.schema import Message, RunResult

DEMO_QUESTION = "What is 25% of 300?"
DEMO_MODEL = "dashscope/qwen-turbo"
OLLAMA_URL = "http://127.0.0.1:11434"
# The replies Qwen (qwen-turbo) gave in the seed transcript, verbatim.
SEED_REPLIES = (
    "Thought: I need to calculate 25% of 300. I can use the Calculator tool for this.\n"
    "Action:\n```\n{\n  \"action\": \"Calculator\",\n  \"action_input\": \"300 * 0.25\"\n}\n```\n",
    "The calculation shows that 25% of 300 is 75. \n\nFinal Answer: 75",
)
HOW_TO_CONFIGURE = (
    "set AGENT_MODEL (e.g. openai/gpt-4o-mini with OPENAI_API_KEY, dashscope/qwen-turbo with "
    "DASHSCOPE_API_KEY, ollama/qwen2.5 with a local Ollama), pass --model, or save a default "
    "with agent models default MODEL (agent keys set PROVIDER stores its key)"
)


def demo_cassette() -> Path:
    """The bundled cassette of the seed transcript."""
    return Path(str(files("agentcli").joinpath("data/demo_cassette.json")))


def is_demo_question(question: str) -> bool:
    """True for the demo question, forgiving case, spacing and an optional 'the'."""
    norm = re.sub(r"\s+", " ", question.strip().lower()).replace("what is the ", "what is ")
    return norm.rstrip("?").strip() == DEMO_QUESTION.lower().rstrip("?")


def probe_ollama(base_url: str = OLLAMA_URL, timeout: float = 0.3) -> str | None:
    """The first model a local Ollama serves, or None when none answers quickly.

    A plain TCP connect comes first: when nothing listens (the usual case on a fresh
    machine) that answers in microseconds, without building an HTTP client.
    """
    import socket
    from urllib.parse import urlsplit

    url = base_url.rstrip("/").removesuffix("/v1")
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        socket.create_connection((parts.hostname or "127.0.0.1", port), timeout).close()
    except (OSError, ValueError):
        return None
    import httpx

    try:  # one probe, so no pooled client (models share the portal loop's pool)
        reply = httpx.get(url + "/api/tags", timeout=timeout)
        models = reply.json().get("models") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    names = [m.get("name") for m in models if isinstance(m, dict) and m.get("name")]
    return f"ollama/{names[0]}" if names else None


def record_demo_cassette(path: Path) -> RunResult:
    """Re-record the demo cassette from the seed replies through today's prompts."""
    from agentcli.create import initialize_agent
    from agentcli.models.fake import FakeChatModel
    from agentcli.models.replay import RecordingChatModel
    from agentcli.tools import load_tools

    llm = RecordingChatModel(FakeChatModel(list(SEED_REPLIES), name=DEMO_MODEL), path)
    tools = load_tools(["llm-math"], llm=llm)
    executor = initialize_agent(tools, llm, handle_parsing_errors=True)
    return executor.invoke(DEMO_QUESTION)


def demo_chat_model() -> BaseChatModel:
    """The model of the offline chat demo: the seed's Qwen replies for the demo question (the
    Calculator is really called), and for anything else a reply saying how to set up a model."""
    from agentcli.models.fake import FakeChatModel  # (a run with a model loads neither)

    def reply(messages: list[Message]) -> str:
        asks = [i for i, m in enumerate(messages) if m.role == "user"
                and not m.content.startswith(("Observation", "TOOL RESPONSE"))]
        last = asks[-1] if asks else 0
        if any("Answer: 75" in m.content for m in messages[last + 1:]):  # this turn's tool ran
            return SEED_REPLIES[1]
        lines = messages[last].content.strip().splitlines() if asks else []
        if lines and is_demo_question(lines[-1]):
            return SEED_REPLIES[0]
        return ("Final Answer: This is the offline demo: without a model I can only work out "
                f"\"{DEMO_QUESTION}\". To ask your own questions, {HOW_TO_CONFIGURE}.")

    return FakeChatModel(reply, name="offline-demo")

"""Middleware hooks: before/after the model, around tool calls, jump_to; the built-ins."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli import create_agent, tool
from agentcli.create import initialize_agent
from agentcli.middleware import (
    AgentMiddleware,
    RunInfo,
    Summarization,
    ToolCallLimit,
    ToolCallRequest,
)
from agentcli.models.fake import FakeChatModel
from agentcli.schema import ChatResult, Message, ToolCall


@tool
def lookup(city: str) -> str:
    """Look up the weather."""
    return f"sunny in {city}"


def calls(*cities: str) -> ChatResult:
    return ChatResult("", tool_calls=tuple(
        ToolCall(f"c{i}", "lookup", f'{{"city": "{c}"}}') for i, c in enumerate(cities)))


def test_tool_call_limit_refuses_calls_past_the_limit() -> None:
    model = FakeChatModel([calls("Oslo"), calls("Rome"), "done"])
    agent = create_agent(model, [lookup], middleware=[ToolCallLimit(1, tool="lookup")])
    result = agent.executor.invoke("weather?")
    observations = [s.observation for s in result.steps]
    assert observations[0] == "sunny in Oslo"
    assert "at most 1 time" in observations[1]


def test_wrap_tool_call_sees_and_replaces_the_call() -> None:
    seen: list[str] = []

    class Shout(AgentMiddleware):
        def wrap_tool_call(self, call: ToolCallRequest, handler: Any) -> Any:
            seen.append(call.call_id or "")
            return str(handler(call)).upper()

    model = FakeChatModel([calls("Oslo"), "done"])
    result = create_agent(model, [lookup], middleware=[Shout()]).executor.invoke("w?")
    assert seen == ["c0"] and result.steps[0].observation == "SUNNY IN OSLO"


def test_jump_to_end_after_the_model() -> None:
    class EndOnRefusal(AgentMiddleware):
        def after_model(self, state: Mapping[str, Any], result: ChatResult,
                        run: RunInfo) -> dict[str, Any] | None:
            return {"jump_to": "end"} if "cannot" in result.text else None

    model = FakeChatModel(["I cannot help with that."])
    result = create_agent(model, [lookup], middleware=[EndOnRefusal()]).executor.invoke("x")
    assert (result.stop_reason, result.output) == ("jump_to_end", "I cannot help with that.")


def test_before_model_update_reaches_the_request() -> None:
    class AddHint(AgentMiddleware):
        def before_model(self, state: Mapping[str, Any], run: RunInfo) -> dict[str, Any] | None:
            if run.iterations == 0:
                return {"messages": [Message("user", "Answer in French.")]}
            return None

    model = FakeChatModel(["Bonjour"])
    create_agent(model, [], middleware=[AddHint()]).invoke("hello")
    assert model.requests[0].messages[-1].content == "Answer in French."


def test_summarization_replaces_old_messages_with_a_summary() -> None:
    summarizer = FakeChatModel(lambda messages: "They talked about Oslo weather.")
    model = FakeChatModel([calls("Oslo"), calls("Rome"), "done"])
    middleware = Summarization(summarizer, max_tokens=10, keep=2)
    out = create_agent(model, [lookup], middleware=[middleware]).invoke("weather " * 40)
    last = model.requests[-1].messages
    assert any("Summary of the earlier conversation: They talked" in m.content for m in last)
    assert len(summarizer.requests) >= 1
    assert out["messages"][0].content.startswith("Summary of the earlier conversation")


def test_a_new_agent_type_is_a_module_a_prompt_and_one_registry_line(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The toy type below is the whole change: its module, its prompt file, one line."""
    (tmp_path / "toy_prompt.txt").write_text("Answer in one word: {input}\n")
    (tmp_path / "toy_agent.py").write_text(
        "from pathlib import Path\n"
        "from agentcli.agents.base import Agent\n"
        "from agentcli.schema import AgentFinish, ChatRequest, user\n"
        "PROMPT = (Path(__file__).parent / 'toy_prompt.txt').read_text()\n"
        "class OneWord(Agent):\n"
        "    agent_type = 'one-word'\n"
        "    summary = 'Answers in one word, never uses tools.'\n"
        "    def request(self, state, *, final=False):\n"
        "        return ChatRequest((user(PROMPT.replace('{input}', state['input'])),))\n"
        "    def decide(self, result):\n"
        "        return AgentFinish({'output': result.text.split()[0]}, result.text)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from toy_agent import OneWord

    model = FakeChatModel(["Blue, mostly."])
    result = initialize_agent([], model, OneWord).invoke("Sky colour?")  # the class itself
    assert result.output == "Blue,"
    assert model.requests[0].messages[0].content == "Answer in one word: Sky colour?\n"


def test_summarization_shortens_a_long_text_agent_run() -> None:
    """The summary acts on the one history, so a text agent's scratchpad shrinks too; the
    summary request is an event of the run, counted in its usage."""

    @tool
    def fetch(page: str) -> str:
        """Fetch a page."""
        return f"page {page}: " + "lorem ipsum " * 60

    pages = iter(range(6))

    def replies(messages: list[Message]) -> str:
        page = next(pages, None)
        if page is not None:
            return f"Thought: next\nAction: fetch\nAction Input: {page}"
        return "Thought: enough\nFinal Answer: read them all"

    model = FakeChatModel(replies)
    summarizer = FakeChatModel(["They fetched pages 0 to 3; each was lorem ipsum."] * 5,
                               name="fake/summarizer")
    executor = initialize_agent([fetch], model, "zero-shot-react-description",
                                middleware=[Summarization(summarizer, max_tokens=400, keep=2)],
                                return_intermediate_steps=True)
    events = list(executor.stream("Read the pages."))
    result = events[-1].result
    prompts = [r.messages[-1].content for r in model.requests]
    longest = max(len(p) for p in prompts)
    assert summarizer.requests, "the long run was summarized"
    last = prompts[-1]
    assert "They fetched pages 0 to 3" in last and "page 0: lorem" not in last
    assert len(last) < longest  # the scratchpad shrank
    starts = [e.model for e in events if e.kind == "model_start"]
    assert starts.count(summarizer.name) == len(summarizer.requests)
    assert result.model_calls == len(model.requests) + len(summarizer.requests)


def test_trimming_applies_to_a_tool_calling_run() -> None:
    model = FakeChatModel([calls("Oslo"), calls("Rome"), calls("Paris"), "done"])
    agent = initialize_agent([lookup], model, "tool-calling", trim_intermediate_steps=1)
    agent.invoke("weather?")
    last = model.requests[-1].messages
    tool_results = [m.content for m in last if m.role == "tool"]
    assert tool_results == ["sunny in Paris"]  # only the last step's turn is sent
    calls_sent = [c for m in last for c in m.tool_calls]
    assert len(calls_sent) == 1  # its assistant turn stays with it; the older turns are gone
    assert last[0].role == "system" or last[0].content == "weather?"
    assert any(m.content == "weather?" for m in last)


def test_a_text_agent_type_is_one_module_and_one_registry_line(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Prompt, parser and stop words live on the class: no prompt file, no other edit."""
    (tmp_path / "terse_agent.py").write_text(
        "from agentcli.agents.base import TextAgent, scratchpad\n"
        "from agentcli.agents.parsers import ReActOutputParser\n"
        "from agentcli.schema import user\n"
        "class Terse(TextAgent):\n"
        "    agent_type = 'terse'\n"
        "    summary = 'ReAct in few words.'\n"
        "    stop = ('\\nObservation:',)\n"
        "    prompts = {'terse': 'Tools: {tools}\\nQ: {input}\\n{work}'}\n"
        "    def __init__(self, tools, **kw):\n"
        "        super().__init__(tools, **kw)\n"
        "        self.parser = ReActOutputParser()\n"
        "    def build_messages(self, steps, inputs, *, final=False):\n"
        "        names = ', '.join(self.allowed_tools)\n"
        "        return [user(self.prompt('terse', tools=names, input=inputs['input'],\n"
        "                                 work=scratchpad(steps)))]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from terse_agent import Terse

    model = FakeChatModel(["Action: lookup\nAction Input: Oslo", "Final Answer: sunny"])
    result = initialize_agent([lookup], model, Terse).invoke("Weather?")
    assert result.output == "sunny"
    first, second = model.requests
    assert first.messages[0].content.startswith("Tools: lookup\nQ: Weather?")
    assert first.stop == ["\nObservation:"]
    assert "Observation: sunny in Oslo" in second.messages[0].content


class _Epilogue(AgentMiddleware):
    """Asks the model one more thing once the run has its answer (as a summary memory does)."""

    def __init__(self) -> None:
        self.replies: list[str] = []

    def ask_at_end(self, state: Mapping[str, Any], result: Any, run: RunInfo) -> Any:
        from agentcli.middleware import ModelAsk
        from agentcli.schema import ChatRequest, user

        def then(reply: ChatResult) -> None:
            self.replies.append(reply.text)

        return ModelAsk(ChatRequest((user(f"sum up: {result.output}"),)), then)


def test_a_runs_own_middleware_asks_at_its_end_within_the_run() -> None:
    from agentcli.schema import Usage

    model = FakeChatModel([ChatResult("the answer is 42", usage=Usage(5, 2)),
                           ChatResult("the summary", usage=Usage(30, 4))])
    executor = create_agent(model, [lookup]).executor
    epilogue = _Epilogue()
    events = list(executor.stream("q?", {"middleware": [epilogue]}))
    kinds = [e.kind for e in events]
    assert kinds.index("finish") < kinds.index("model_start", kinds.index("finish"))
    assert kinds[-1] == "end" and epilogue.replies == ["the summary"]
    result = events[-1].result  # type: ignore[union-attr]
    assert result.output == "the answer is 42" and result.model_calls == 2
    assert result.usage == Usage(35, 6)  # the end request's tokens are the run's
    assert model.requests[1].messages[0].content == "sum up: the answer is 42"


def test_a_failed_request_after_the_answer_is_a_notice_and_the_answer_stands() -> None:
    def replies(messages: Any, **_: Any) -> str:
        if "sum up" in messages[-1].content:
            raise RuntimeError("no summaries today")
        return "the answer is 42"

    executor = create_agent(FakeChatModel(replies), [lookup]).executor
    events = list(executor.stream("q?", {"middleware": [_Epilogue()]}))
    notices = [e for e in events if e.kind == "notice" and e.topic == "ask_failed"]
    assert len(notices) == 1 and "no summaries today" in notices[0].text  # type: ignore[union-attr]
    assert events[-1].result.output == "the answer is 42"  # type: ignore[union-attr]

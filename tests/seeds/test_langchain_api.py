"""Issue 19's items through the public API, each the way a LangChain program writes it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Annotated, Any

import pytest

from agentcli import (
    AgentExecutor,
    BaseCallbackHandler,
    InjectedState,
    Tool,
    create_agent,
    initialize_agent,
    load_tools,
)
from agentcli.compat import AgentActionMessageLog, PromptTemplate, create_react_agent, hub
from agentcli.errors import ConfigError, ToolLoadError
from agentcli.models.fake import FakeChatModel
from agentcli.schema import ChatResult, ToolCall

REACT = "zero-shot-react-description"
CHAT = "chat-zero-shot-react-description"


def calls(*pairs: tuple[str, dict[str, Any]]) -> ChatResult:
    return ChatResult("", tuple(ToolCall(f"c{i}", n, json.dumps(a))
                                for i, (n, a) in enumerate(pairs)))


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_chain_start(self, inputs: dict[str, Any], **kw: Any) -> None:
        self.seen.append(("chain_start", kw))

    def on_llm_start(self, messages: Any, **kw: Any) -> None:
        self.seen.append(("llm_start", None))

    def on_tool_start(self, tool: str, tool_input: Any, **kw: Any) -> None:
        self.seen.append(("tool_start", tool))

    def on_tool_end(self, observation: str, **kw: Any) -> None:
        self.seen.append(("tool_end", observation))

    def on_text(self, text: str, **kw: Any) -> None:
        self.seen.append(("text", text))

    def kinds(self) -> list[str]:
        return [k for k, _ in self.seen]


def echo_tool() -> Tool:
    return Tool("echo", "Repeats its input.", func=lambda text: f"echo: {text}")


# -- item 2: an injected parameter declared before the model's -----------------------------
def test_injected_state_may_come_before_the_model_filled_parameter() -> None:
    def greet(state: Annotated[dict, InjectedState], who: str) -> str:  # type: ignore[type-arg]
        """Greets someone, knowing the question."""
        return f"hello {who}, you asked {state['messages'][0].content!r}"

    def field_first(asked: Annotated[str, InjectedState("topic")], who: str, n: int) -> str:
        """Greets n times."""
        return f"{asked}:{who}x{n}"

    from agentcli import AgentState

    class State(AgentState):
        topic: str

    llm = FakeChatModel([calls(("greet", {"who": "Ann"}), ("field_first", {"who": "Bo", "n": 2})),
                         "done"])
    out = create_agent(llm, [greet, field_first], state_schema=State).invoke(
        {"messages": [{"role": "user", "content": "hi"}], "topic": "T"})
    tool_texts = [m.content for m in out["messages"] if m.role == "tool"]
    assert tool_texts == ["hello Ann, you asked 'hi'", "T:Box2"]


# -- items 3 and 4: results, AgentExecutor's LangChain options, invoke's config -------------
def test_executor_options_verbose_tags_metadata_and_callback_manager(
        capsys: pytest.CaptureFixture[str]) -> None:
    from agentcli.callbacks.manager import CallbackManager

    recorder, per_run = Recorder(), Recorder()
    llm = FakeChatModel(["Action: echo\nAction Input: hi", "Final Answer: done"])
    agent = create_react_agent(llm, [echo_tool()], hub.pull("hwchase17/react"))
    executor = AgentExecutor(agent=agent, tools=[echo_tool()], verbose=True, tags=["team-a"],
                             metadata={"ticket": 7}, callback_manager=CallbackManager([recorder]))
    result = executor.invoke(input={"input": "say hi"},
                             config={"callbacks": [per_run], "tags": ["run-1"],
                                     "run_name": "greeting"})
    assert result["output"] == "done" and result["input"] == "say hi"
    assert str(result) == "{'input': 'say hi', 'output': 'done'}"
    start = next(kw for kind, kw in recorder.seen if kind == "chain_start")
    assert start["tags"] == ["team-a", "run-1"] and start["metadata"] == {"ticket": 7}
    assert start["name"] == "greeting"
    assert per_run.kinds().count("tool_start") == 1  # the run's own handler too
    out = capsys.readouterr().out  # verbose=True prints LangChain's trace on stdout
    assert "> Entering new greeting chain..." in out and "> Finished chain." in out  # run_name
    assert "Action Input: hi" in out and "echo: hi" in out
    with pytest.raises(TypeError, match=r"unknown run config key\(s\) \['bogus'\]"):
        executor.invoke("q", config={"bogus": 1})


def test_unknown_keywords_are_type_errors_naming_them() -> None:
    llm = FakeChatModel(["Final Answer: x"])
    with pytest.raises(TypeError, match=r"initialize_agent got unknown argument\(s\) "
                                        r"\['max_iteratons'\].*max_iterations"):
        initialize_agent([echo_tool()], llm, REACT, max_iteratons=3)
    with pytest.raises(TypeError, match="bogus_setting"):
        load_tools(["llm-math"], llm=llm, bogus_setting=1)
    with pytest.raises(TypeError, match="create_react_agent got unknown"):
        create_react_agent(llm, [], hub.pull("hwchase17/react"), tools_renderr=str)


def test_an_agent_that_is_not_an_agent_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match=r"agent must be an agentcli Agent.*got function"):
        AgentExecutor(agent=lambda x: x, tools=[])  # type: ignore[arg-type]


def test_saved_agent_round_trips_through_agent_path(tmp_path: Path) -> None:
    llm = FakeChatModel(["Final Answer: one", "Final Answer: two"])
    first = initialize_agent([echo_tool()], llm, REACT,
                             agent_kwargs={"prefix": "You are a careful echo bot."})
    first.save_agent(tmp_path / "agent.yaml")
    again = initialize_agent([echo_tool()], llm, agent_path=tmp_path / "agent.yaml")
    assert again.agent.agent_type == REACT
    again.invoke("q")
    first.invoke("q")
    prompts = [r.messages[0].content for r in llm.requests]
    assert prompts[0] == prompts[1] and prompts[0].startswith("You are a careful echo bot.")
    (tmp_path / "bad.yaml").write_text("agent: x\n")
    with pytest.raises(ConfigError, match="has no '_type'"):
        initialize_agent([], llm, agent_path=tmp_path / "bad.yaml")


# -- item 5: load_tools(callbacks=...) -----------------------------------------------------
def test_load_tools_callbacks_hear_each_call_of_those_tools() -> None:
    recorder = Recorder()
    llm = FakeChatModel(['Action:\n```\n{"action": "Calculator", "action_input": "2 + 2"}\n```',
                         "Final Answer: 4"])
    tools = load_tools(["llm-math"], llm=llm, callbacks=[recorder])
    assert initialize_agent(tools, llm, CHAT).invoke("2+2?")["output"] == "4"
    assert ("tool_start", "Calculator") in recorder.seen
    assert ("tool_end", "Answer: 4") in recorder.seen
    assert "llm_start" not in recorder.kinds()  # the tool's handlers hear the tool only


def test_tool_run_takes_callbacks_and_requests_points_to_its_new_names() -> None:
    recorder = Recorder()
    assert echo_tool().run("x", callbacks=[recorder]) == "echo: x"
    assert recorder.kinds() == ["tool_start", "tool_end"]
    with pytest.raises(ToolLoadError, match=r"requests_get .*requests_all"):
        load_tools(["requests"])


# -- item 6: prompt options and create_react_agent's template check ------------------------
def test_prompt_options_build_the_prompt() -> None:
    llm = FakeChatModel(["Final Answer: a", "Final Answer: b"])
    initialize_agent([echo_tool()], llm, REACT, agent_kwargs={
        "prefix": "PREFIX here.", "suffix": "Begin now!\nQ: {input}\n{agent_scratchpad}",
        "input_variables": ["input", "agent_scratchpad"]}).invoke("what?")
    prompt = llm.requests[0].messages[0].content
    assert prompt.startswith("PREFIX here.\n\necho: Repeats its input.")
    assert prompt.rstrip().endswith("Q: what?") and "Action: the tool to use" in prompt
    initialize_agent([echo_tool()], llm, CHAT, agent_kwargs={
        "system_message_prefix": "SYSTEM PREFIX.", "human_message": "Question please: {input}"
    }).invoke("why?")
    system, human = llm.requests[1].messages[:2]
    assert system.content.startswith("SYSTEM PREFIX.\n\necho:")
    assert human.content == "Question please: why?"


def test_prompt_options_are_checked() -> None:
    llm = FakeChatModel([])
    with pytest.raises(ConfigError, match=r"missing \{agent_scratchpad\}"):
        initialize_agent([], llm, REACT, agent_kwargs={"suffix": "Q: {input}"})
    with pytest.raises(ConfigError, match="takes prompt options prefix"):
        initialize_agent([], llm, REACT, agent_kwargs={"system_message_prefix": "x"})
    with pytest.raises(ConfigError, match=r"input_variables \['colour'\]"):
        initialize_agent([], llm, REACT, agent_kwargs={"input_variables": ["colour"]})
    with pytest.raises(ConfigError, match=r"missing \{agent_scratchpad\}"):
        create_react_agent(llm, [], PromptTemplate.from_template(
            "{tools} {tool_names} Question: {input}"))


def test_create_prompt_and_a_custom_output_parser() -> None:
    from agentcli.agents import agent_class
    from agentcli.schema import AgentFinish

    prompt = agent_class(REACT).create_prompt([echo_tool()], prefix="Be brief.")
    assert prompt.template.startswith("Be brief.\n\necho: Repeats its input.")
    assert prompt.input_variables == ["agent_scratchpad", "input"]

    class Upper:
        def parse(self, text: str) -> AgentFinish:
            return AgentFinish({"output": text.upper()}, text)

    llm = FakeChatModel(["anything"])
    out = initialize_agent([], llm, REACT, agent_kwargs={"output_parser": Upper()}).invoke("q")
    assert out["output"] == "ANYTHING"


# -- item 7: a JSON blob without action_input ----------------------------------------------
def test_a_blob_without_action_input_calls_the_tool_without_arguments() -> None:
    def get_time() -> str:
        """The time."""
        return "12:00"

    from agentcli import tool

    llm = FakeChatModel(['Action:\n```\n{"action": "get_time"}\n```', "Final Answer: noon"])
    executor = initialize_agent([tool(get_time)], llm, "structured-chat-zero-shot-react-"
                                "description", return_intermediate_steps=True)
    result = executor.invoke("what time is it?")
    assert result["intermediate_steps"][0][1] == "12:00"
    assert len(llm.requests) == 2  # no correction turn


# -- item 8: on_text from tools, ignore_* flags, LangChain hook signatures, p99 -------------
def test_sql_tool_says_what_it_runs_through_on_text(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table t (x)")
    recorder = Recorder()
    llm = FakeChatModel(["Action: sql_db_query\nAction Input: select count(*) from t",
                         "Final Answer: 0"])
    tools = load_tools(["sql_db_query"], sqlite_path=str(db))
    initialize_agent(tools, llm, REACT, callbacks=[recorder]).invoke("how many?")
    assert ("text", "Executing SQL: select count(*) from t") in recorder.seen


def test_ignore_flags_mute_those_hooks() -> None:
    class NoLlm(Recorder):
        ignore_llm = True
        ignore_chain = True

    quiet = NoLlm()
    llm = FakeChatModel(["Action: echo\nAction Input: a", "Final Answer: b"])
    initialize_agent([echo_tool()], llm, REACT, callbacks=[quiet]).invoke("q")
    assert "llm_start" not in quiet.kinds() and "chain_start" not in quiet.kinds()
    assert "tool_start" in quiet.kinds()


def test_a_handler_written_with_langchains_signatures_is_served() -> None:
    from uuid import UUID

    class Performance(BaseCallbackHandler):  # the seed's shape: serialized first, run_id
        def __init__(self) -> None:
            self.llm: list[Any] = []
            self.tools: list[str] = []
            self.tokens: list[int] = []

        def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], *,
                         run_id: UUID, **kwargs: Any) -> None:
            self.llm.append((serialized["name"], prompts[0][:5]))

        def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
            self.tokens.append(response.llm_output["token_usage"]["total_tokens"])

        def on_tool_start(self, serialized: dict[str, Any], input_str: str, *,
                          run_id: UUID, **kwargs: Any) -> None:
            self.tools.append(f"{serialized.get('name', 'unknown_tool')}({input_str})")

    handler = Performance()
    llm = FakeChatModel(["Action: echo\nAction Input: a", "Final Answer: b"], name="fake-1")
    initialize_agent([echo_tool()], llm, REACT, callbacks=[handler]).invoke("q")
    assert handler.llm == [("fake-1", "user:"), ("fake-1", "user:")]
    assert handler.tools == ["echo(a)"] and len(handler.tokens) == 2 and handler.tokens[0] > 0


def test_metrics_have_p99_and_error_rates() -> None:
    from agentcli.callbacks.metrics import MetricsHandler
    from agentcli.errors import ProviderError

    metrics = MetricsHandler()
    llm = FakeChatModel(["Action: boom\nAction Input: a", "Final Answer: b"])

    def boom(text: str) -> str:
        raise RuntimeError("broken tool")

    initialize_agent([Tool("boom", "Fails.", func=boom)], llm, REACT,
                     callbacks=[metrics]).invoke("q")
    s = metrics.summary()
    assert s["latency_p99"] is not None and s["latency_p99"] >= s["latency_p50"]
    assert s["tool_error_rate"] == 1.0 and s["model_error_rate"] == 0.0
    failing = FakeChatModel([ProviderError("down", provider="fake")])
    with pytest.raises(ProviderError):
        initialize_agent([], failing, REACT, callbacks=[metrics]).invoke("q")
    assert metrics.summary()["model_error_rate"] == pytest.approx(1 / 3)


# -- item 9: composition and the message-log action ----------------------------------------
def test_executor_pipes_into_a_function_and_the_message_log_action_exists() -> None:
    llm = FakeChatModel(["Final Answer: 42"])
    chain = initialize_agent([], llm, REACT) | (lambda result: result["output"] + "!")
    assert chain.invoke({"input": "q"}) == "42!"
    action = AgentActionMessageLog("echo", "x", "log", message_log=())
    assert action.tool == "echo" and action.message_log == ()

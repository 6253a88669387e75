"""Issue 34's items, each the way a LangChain program writes it (LangChain's documented usage;
the seed programs' own code is in test_seed_00*.py). Imports: ``agentcli.compat`` stands for
``langchain``, ``langchain_core``, ``langchain_community``, ``langchain_openai``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from agentcli.compat import (
    AgentExecutor,
    BaseCallbackHandler,
    ChatPromptTemplate,
    ChatTongyi,
    Tool,
    create_react_agent,
    hub,
    initialize_agent,
    load_tools,
)
from agentcli.errors import ConfigError
from agentcli.models.fake import FakeChatModel

REACT = "zero-shot-react-description"
CHAT = "chat-zero-shot-react-description"
ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT.parent / "shared" / "seeds"  # shared/ sits beside the clone


def echo_tool() -> Tool:
    return Tool(name="echo", func=lambda text: f"echo: {text}", description="Repeats its input.")


# -- item 1: every name a seed program imports has an agentcli name --------------------------
def test_every_import_in_the_langchain_table_resolves() -> None:
    import importlib

    table = (ROOT / "docs" / "langchain.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `from (\S+) import ([^`]+)` \| `from (\S+) import ([^`]+)` \|",
                      table, re.M)
    assert len(rows) >= 20
    for _, _, module, names in rows:
        for name in names.split(","):
            assert hasattr(importlib.import_module(module), name.strip()), (module, name)
    mapped = {(lc_module, name.strip()) for lc_module, lc_names, _, names in rows
              for name in lc_names.split(",") if name.strip() in
              [n.strip() for n in names.split(",")]}
    seeds = sorted(SEEDS.glob("00*.txt"))
    assert seeds, f"no seed documents in {SEEDS} (a copy of shared/ sits beside the clone)"
    imported = set()
    for seed in seeds:
        for line in seed.read_text(encoding="utf-8").splitlines():
            found = re.match(r"from (lang\S+) import (.+)", line)  # a program's, not a quote
            if found:
                imported |= {(found.group(1), n.strip()) for n in found.group(2).split(",")}
    assert len(imported) >= 20
    assert imported - mapped == set()  # each has a row saying what to import instead


# -- item 2: the result is a dict -------------------------------------------------------------
def test_invoke_returns_a_dict_with_langchains_repr() -> None:
    llm = FakeChatModel(["Action: echo\nAction Input: hi", "Final Answer: 75"])
    executor = initialize_agent([echo_tool()], llm, REACT, return_intermediate_steps=True)
    result = executor.invoke({"input": "What is 25% of 300?"})
    assert isinstance(result, dict)
    assert list(result) == ["input", "output", "intermediate_steps"]
    assert repr(result).startswith("{'input': 'What is 25% of 300?', 'output': '75', "
                                   "'intermediate_steps': [(AgentAction(")
    assert result.output == "75" and result.steps[0].observation == "echo: hi"  # still there
    plain = initialize_agent([], FakeChatModel(["Final Answer: 75"]), REACT).invoke("q")
    assert json.loads(json.dumps(plain)) == {"input": "q", "output": "75"}
    assert plain == {"input": "q", "output": "75"} and dict(plain) == {"input": "q", "output": "75"}


# -- item 3: verbose=True prints what LangChain prints, on stdout ----------------------------
def test_verbose_prints_langchains_trace_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    llm = FakeChatModel(["Thought: echo it\nAction: echo\nAction Input: hi",
                         "Thought: I know it now\nFinal Answer: done"])
    initialize_agent([echo_tool()], llm, REACT, verbose=True).invoke("say hi")
    out, err = capsys.readouterr()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert plain == ("\n\n> Entering new AgentExecutor chain...\n"
                     "Thought: echo it\nAction: echo\nAction Input: hi\nObservation: echo: hi\n"
                     "Thought:Thought: I know it now\nFinal Answer: done\n\n> Finished chain.\n")
    assert "\x1b[36;1m\x1b[1;3mecho: hi\x1b[0m" in out  # the first tool's colour (blue)
    assert err == ""


# -- item 4: each chain, model call and tool call has its own run id --------------------------
class Ids(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, Any]] = []

    def on_chain_start(self, serialized: dict[str, Any], inputs: dict[str, Any], *,
                       run_id: UUID, parent_run_id: UUID | None = None, **kw: Any) -> None:
        self.seen.append(("chain", run_id, parent_run_id))

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID,
                     parent_run_id: UUID | None = None, **kw: Any) -> None:
        self.seen.append(("llm", run_id, parent_run_id))

    def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
        self.seen.append(("llm_end", run_id, kw.get("parent_run_id")))

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, **kw: Any) -> None:
        self.seen.append(("tool", run_id, parent_run_id))

    def on_tool_end(self, output: str, *, run_id: UUID, **kw: Any) -> None:
        self.seen.append(("tool_end", run_id, kw.get("parent_run_id")))


def test_a_tools_model_call_is_the_tools_child() -> None:
    ids = Ids()
    llm = FakeChatModel(['Action:\n```\n{"action": "Calculator", '
                         '"action_input": "300 apples and 25 pears"}\n```',
                         "```text\n300 + 25\n```", "Final Answer: 325"])
    tools = load_tools(["llm-math"], llm=llm)
    assert initialize_agent(tools, llm, CHAT, callbacks=[ids]).invoke("q")["output"] == "325"
    kinds = [k for k, _, _ in ids.seen]
    assert kinds == ["chain", "llm", "llm_end", "tool", "llm", "llm_end", "tool_end", "llm",
                     "llm_end"]
    (_, run, top), (_, agent_llm, p1), _, (_, tool, p2), (_, inner, p3), \
        (_, inner_end, _), (_, tool_end, _), (_, last_llm, p4), _ = ids.seen
    assert all(isinstance(i, UUID) for i in (run, agent_llm, tool, inner, last_llm))
    assert top is None and p1 == p2 == p4 == run and p3 == tool  # the tree
    assert inner_end == inner and tool_end == tool
    assert len({run, agent_llm, tool, inner, last_llm}) == 5


# -- item 5: {agent_scratchpad} in a chat agent's human_message ------------------------------
def test_human_message_scratchpad_ends_the_message_or_is_refused() -> None:
    """agentcli's own chat agent (the CLI's turns); compat's has LangChain's shape (round 4)."""
    from agentcli import initialize_agent

    llm = FakeChatModel(["Action:\n```\n{\"action\": \"echo\", \"action_input\": \"a\"}\n```",
                         "Final Answer: b"])
    initialize_agent([echo_tool()], llm, CHAT, agent_kwargs={
        "human_message": "Q: {input}\n\n{agent_scratchpad}"}).invoke("why?")
    second = llm.requests[1].messages
    assert second[1].content == "Q: why?"  # the work follows as turns: where the pad is
    assert [m.role for m in second[2:]] == ["assistant", "user"]
    assert "echo: a" in second[-1].content
    with pytest.raises(ConfigError, match=r"\{agent_scratchpad\} must end it"):
        initialize_agent([echo_tool()], llm, CHAT, agent_kwargs={
            "human_message": "{input}\n\n{agent_scratchpad}\n(reminder: answer in JSON)"})


# -- item 6: the provider shims take LangChain's constructor arguments -----------------------
def test_chat_tongyi_takes_langchains_arguments(mock_server: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    monkeypatch.setenv("DASHSCOPE_BASE_URL", mock_server.base_url)
    mock_server.add_reply("Final Answer: 75")
    llm = ChatTongyi(model_name="qwen-max", dashscope_api_key="sk-given", top_p=0.8,
                     streaming=True, max_retries=1, model_kwargs={"enable_search": True},
                     temperature=0)
    assert initialize_agent([], llm, REACT).invoke("q")["output"] == "75"
    sent = mock_server.requests[0]
    assert sent.body["model"] == "qwen-max" and sent.body["top_p"] == 0.8
    assert sent.body["enable_search"] is True and sent.body["temperature"] == 0
    assert sent.headers["Authorization"] == "Bearer sk-given"
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['top_q'\]"):
        ChatTongyi(top_q=1)


# -- item 8: the Runnable surface ----------------------------------------------------------
def test_pipes_compose_both_ways_and_keep_the_runnable_surface() -> None:
    import asyncio

    llm = FakeChatModel(["Final Answer: 42"] * 8)
    executor = initialize_agent([], llm, REACT)
    chain = executor | (lambda r: r["output"]) | (lambda s: s + "!")
    assert chain.invoke({"input": "q"}) == "42!"
    assert list(chain.stream({"input": "q"})) == ["42!"]
    assert asyncio.run(chain.ainvoke({"input": "q"})) == "42!"
    front = (lambda q: {"input": q.upper()}) | executor
    assert front.invoke("q")["input"] == "Q"
    config = {"max_concurrency": 1, "recursion_limit": 5, "configurable": {"x": 1},
              "tags": ["t"]}
    assert [r["output"] for r in executor.batch(["a", "b"], config=config)] == ["42", "42"]
    assert executor.invoke("q", config=config)["output"] == "42"


def test_create_react_agent_takes_a_tools_renderer() -> None:
    llm = FakeChatModel(["Final Answer: x"])
    agent = create_react_agent(llm, [echo_tool()], hub.pull("hwchase17/react"),
                               tools_renderer=lambda ts: "; ".join(f"<{t.name}>" for t in ts))
    AgentExecutor(agent=agent, tools=[echo_tool()]).invoke({"input": "q"})
    assert "<echo>" in llm.requests[0].messages[0].content


# -- item 9: smaller shapes ----------------------------------------------------------------
def test_tool_run_verbose_and_color(capsys: pytest.CaptureFixture[str]) -> None:
    assert echo_tool().run("x", verbose=True, color="yellow") == "echo: x"
    assert capsys.readouterr().out == "\x1b[33;1m\x1b[1;3mecho: x\x1b[0m"
    assert echo_tool().run("x", verbose=False, color="red") == "echo: x"
    assert capsys.readouterr().out == ""


def test_executor_keys_handler_defaults_and_ignore_chat_model() -> None:
    executor = initialize_agent([], FakeChatModel(["Final Answer: a"]), REACT,
                                return_intermediate_steps=True)
    assert executor.input_keys == ["input"]
    assert executor.output_keys == ["output", "intermediate_steps"]

    class Quiet(BaseCallbackHandler):
        ignore_chat_model = True

        def __init__(self) -> None:
            self.hooks: list[str] = []

        def on_llm_start(self, *a: Any, **kw: Any) -> None:
            self.hooks.append("llm_start")

        def on_llm_end(self, *a: Any, **kw: Any) -> None:
            self.hooks.append("llm_end")

    plain = BaseCallbackHandler()
    assert (plain.ignore_llm, plain.ignore_chain, plain.ignore_agent, plain.ignore_retriever,
            plain.ignore_chat_model, plain.raise_error) == (False,) * 6
    quiet = Quiet()
    executor.invoke("q", callbacks=[quiet])
    assert quiet.hooks == ["llm_end"]  # the chat-model start muted, the rest heard


def test_load_tools_callback_manager_and_metrics_reset() -> None:
    from agentcli.callbacks.manager import CallbackManager
    from agentcli.callbacks.metrics import MetricsHandler

    class Heard(BaseCallbackHandler):
        def __init__(self) -> None:
            self.tools: list[str] = []

        def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
            self.tools.append(serialized["name"])

    heard = Heard()
    llm = FakeChatModel([])
    (calc,) = load_tools(["llm-math"], llm=llm, callback_manager=CallbackManager([heard]))
    assert calc.run("2 + 2") == "Answer: 4" and heard.tools == ["Calculator"]
    metrics = MetricsHandler()
    initialize_agent([], FakeChatModel(["Final Answer: a"]), REACT,
                     callbacks=[metrics]).invoke("q")
    assert metrics.summary()["model_calls"] == 1
    metrics.reset_metrics()
    assert metrics.summary()["model_calls"] == 0


def test_langchains_agent_classes() -> None:
    from agentcli.compat import ZeroShotAgent

    # (plan() agents run since issue 41: test_langchain_round4.py)
    llm = FakeChatModel(["Final Answer: ok"])
    agent = ZeroShotAgent.from_llm_and_tools(llm, [echo_tool()], prefix="Be brief.")
    assert AgentExecutor(agent=agent, tools=[echo_tool()]).invoke("q")["output"] == "ok"
    assert llm.requests[0].messages[0].content.startswith("Be brief.")
    assert ZeroShotAgent.create_prompt([echo_tool()]).input_variables == [
        "agent_scratchpad", "input"]


def test_chat_prompt_template_is_two_messages() -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "You answer in {lang}."),
                                               ("human", "{input}")])
    assert prompt.input_variables == ["input", "lang"]
    system, human = prompt.format_messages(lang="French", input="hi")
    assert (system.role, system.content) == ("system", "You answer in French.")
    assert (human.role, human.content) == ("user", "hi")
    with pytest.raises(KeyError, match="lang"):
        prompt.format_messages(input="hi")


# -- item 7 (the seed's own classes are in test_seed_002_agents.py): a structured BaseTool --
def test_a_base_tool_with_several_arguments_and_an_async_run() -> None:
    import asyncio

    from agentcli.compat import BaseTool

    class Multiply(BaseTool):
        name = "multiply"
        description = "Multiplies two integers."

        def _run(self, a: int, b: int, run_manager: Any = None) -> str:
            return str(a * b)

        async def _arun(self, a: int, b: int, run_manager: Any = None) -> str:
            return f"async {a * b}"

    tool = Multiply()
    assert tool.args_schema is not None and sorted(tool.args_schema["properties"]) == ["a", "b"]
    assert tool.run({"a": 6, "b": 7}) == "42"
    assert asyncio.run(tool.arun({"a": 2, "b": 3})) == "async 6"


def test_create_agent_composes_and_batches_with_a_config() -> None:
    from agentcli.compat import create_agent

    agent = create_agent(FakeChatModel(["hello"] * 3), [])
    last = agent | (lambda state: state["messages"][-1].content.upper())
    assert last.invoke({"messages": [{"role": "user", "content": "hi"}]}) == "HELLO"
    assert len(agent.batch(["a", "b"], config={"max_concurrency": 1})) == 2


def test_verbose_tool_calling_agent_says_invoking(capsys: pytest.CaptureFixture[str]) -> None:
    from agentcli.schema import ChatResult as Reply
    from agentcli.schema import ToolCall as Call

    llm = FakeChatModel([Reply("", (Call("c1", "echo", '{"input": "hi"}'),)), "done"])
    initialize_agent([echo_tool()], llm, "tool-calling", verbose=True).invoke("q")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert "\nInvoking: `echo` with `" in plain and "echo: hi" in plain
    assert "Observation:" not in plain and plain.endswith("done\n\n> Finished chain.\n")


def test_message_classes_build_agentcli_messages_by_role() -> None:
    from agentcli.compat import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from agentcli.schema import Message

    ai = AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}])
    tool = ToolMessage("found", tool_call_id="c1", name="search")
    human, system = HumanMessage("hi"), SystemMessage("be brief")
    assert [m.role for m in (ai, tool, human, system)] == ["assistant", "tool", "user", "system"]
    assert all(isinstance(m, Message) and isinstance(m, BaseMessage)
               for m in (ai, tool, human, system))
    assert isinstance(ai, AIMessage) and not isinstance(human, AIMessage)
    assert ai.tool_calls[0].name == "search" and json.loads(ai.tool_calls[0].arguments) == {
        "q": "x"}
    assert (tool.tool_call_id, tool.name, tool.content) == ("c1", "search", "found")
    with pytest.raises(TypeError, match="tool_call_id"):
        ToolMessage("no id")
    with pytest.raises(TypeError, match="abstract"):
        BaseMessage("which role?")

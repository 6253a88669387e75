"""Issue 41's items, each as LangChain documents it (and as the seeds write it, where a seed
has the code). Imports: ``agentcli.compat`` stands for ``langchain``, ``langchain_core``,
``langchain_community``; models are reached over HTTP on the mock server or are the fake
chat model."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentcli.compat import AgentType, BaseCallbackHandler, ChatTongyi, Tool, initialize_agent
from agentcli.models.fake import FakeChatModel

REACT = AgentType.ZERO_SHOT_REACT_DESCRIPTION


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def echo_tool() -> Tool:
    return Tool(name="echo", func=lambda text: f"echo: {text}", description="Repeats its input.")


@pytest.fixture
def tongyi(mock_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-test")
    monkeypatch.setenv("DASHSCOPE_BASE_URL", mock_server.base_url)
    return mock_server


# -- item 2: run, __call__, return_only_outputs ---------------------------------------------
def test_run_and_call_as_langchain_documents_them(tongyi: Any) -> None:
    for reply in ("Action: echo\nAction Input: hi", "Final Answer: one", "Final Answer: two",
                  "Final Answer: three", "Final Answer: four"):
        tongyi.add_reply(reply)
    executor = initialize_agent([echo_tool()], ChatTongyi(temperature=0), REACT)
    assert executor.run("What is 2 + 2?") == "one"  # the answer text
    assert executor.run(input="again?") == "two"
    assert executor({"input": "q3"}) == {"input": "q3", "output": "three"}
    heard = Hooks()
    out = executor({"input": "q4"}, return_only_outputs=True, include_run_info=True,
                   callbacks=[heard])
    assert out["output"] == "four" and sorted(out) == ["__run", "output"]
    assert out["__run"].run_id == heard.chain_run_id  # the id the run's handlers heard
    assert len(tongyi.requests) == 5  # one request per model turn, none more
    with pytest.raises(ValueError, match="one question"):
        executor.run("a", input="b")
    steps = initialize_agent([], ChatTongyi(), REACT, return_intermediate_steps=True)
    with pytest.raises(ValueError, match=r"exactly one output key.*invoke"):
        steps.run("q")


def test_seed_002_sequential_chain_calls_a_chain_for_its_outputs() -> None:
    """Seed 002's SequentialChain loop feeds each chain's outputs to the next one."""
    executor = initialize_agent([], FakeChatModel(["Final Answer: 42"]), REACT)
    known_values = {"input": "the question"}
    # -- the seed's loop body, as written --------------------------------------------------
    chain = executor
    outputs = chain(known_values, return_only_outputs=True)
    known_values.update(outputs)
    assert known_values == {"input": "the question", "output": "42"}


# -- item 4: a parse error is LangChain's _Exception step; a forced stop's empty line --------
class Hooks(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []
        self.chain_run_id: Any = None

    def on_chain_start(self, serialized: dict[str, Any], inputs: Any, *, run_id: Any,
                       **kw: Any) -> None:
        self.chain_run_id = run_id

    def on_agent_action(self, action: Any, **kw: Any) -> None:
        self.seen.append(("action", (action.tool, action.tool_input, action.log)))

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kw: Any) -> None:
        self.seen.append(("tool_start", (serialized["name"], input_str)))

    def on_tool_end(self, output: str, **kw: Any) -> None:
        self.seen.append(("tool_end", output))

    def on_text(self, text: str, **kw: Any) -> None:
        self.seen.append(("text", text))


GREEN, END = "\x1b[32;1m\x1b[1;3m", "\x1b[0m"


def test_a_parse_error_is_an_exception_step_for_handlers_and_verbose(
        tongyi: Any, capsys: pytest.CaptureFixture[str]) -> None:
    tongyi.add_reply("Let me think about 25% of 300.")  # neither an action nor an answer
    tongyi.add_reply("Final Answer: 75")
    hooks = Hooks()
    executor = initialize_agent([echo_tool()], ChatTongyi(temperature=0),
                                AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION,
                                handle_parsing_errors=True, verbose=True, callbacks=[hooks])
    result = executor.invoke({"input": "What is the 25% of 300?"},)
    assert result["output"] == "75" and len(tongyi.requests) == 2
    told = tongyi.requests[1].body["messages"][-1]["content"]  # what the model was told
    (kind, (tool, told_input, log)), start, end = hooks.seen
    assert (kind, tool, log) == ("action", "_Exception", "Let me think about 25% of 300.")
    assert told_input in told and told_input
    assert start == ("tool_start", ("_Exception", told_input))
    assert end == ("tool_end", told_input)  # and no on_text
    out = capsys.readouterr().out
    assert out == ("\n\n\x1b[1m> Entering new AgentExecutor chain...\x1b[0m\n"
                   f"{GREEN}Let me think about 25% of 300.{END}\nObservation: {told_input}"
                   f"\nThought:{GREEN}Final Answer: 75{END}\n\n\x1b[1m> Finished chain.\x1b[0m\n")


def test_a_forced_stop_prints_an_empty_line_as_langchain_does(
        capsys: pytest.CaptureFixture[str]) -> None:
    llm = FakeChatModel(["Action: echo\nAction Input: hi"])
    executor = initialize_agent([echo_tool()], llm, REACT, max_iterations=1, verbose=True,
                                early_stopping_method="force")
    assert executor.run("q") == "Agent stopped due to iteration limit or time limit."
    out = capsys.readouterr().out
    assert out.endswith(f"\nObservation: \x1b[36;1m\x1b[1;3mecho: hi{END}\nThought:"
                        f"{GREEN}{END}\n\n\x1b[1m> Finished chain.\x1b[0m\n")
    assert "stopped" not in out


# -- item 5: ChatTongyi's defaults, streaming, LLMResult, configure, message logs, llm-math ---
def test_chat_tongyi_defaults_are_langchains(tongyi: Any) -> None:
    tongyi.add_fault("status", status=429, retry_after=0, times=4)  # agentcli's default: 3
    tongyi.add_reply("Final Answer: 75")
    assert initialize_agent([], ChatTongyi(), REACT).run("q") == "75"
    assert len(tongyi.requests) == 5  # four refused, retried within ChatTongyi's ten
    body = tongyi.requests[-1].body
    assert body["top_p"] == 0.8 and "max_tokens" not in body  # none, though the server is local
    tongyi.add_reply("Final Answer: 1")
    initialize_agent([], ChatTongyi(top_p=0.5, max_tokens=64), REACT).run("q")
    assert (tongyi.requests[-1].body["top_p"], tongyi.requests[-1].body["max_tokens"]) == (0.5, 64)


class Streamed(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.ends: list[Any] = []

    def on_llm_new_token(self, token: str, **kw: Any) -> None:
        self.tokens.append(token)

    def on_llm_end(self, response: Any, **kw: Any) -> None:
        self.ends.append(response)


def test_streaming_sends_tokens_to_handlers_and_on_llm_end_has_generations(
        tongyi: Any) -> None:
    reply = "Thought: I know it.\nFinal Answer: seventy-five"
    tongyi.add_reply(reply)
    handler = Streamed()
    executor = initialize_agent([], ChatTongyi(streaming=True), REACT, callbacks=[handler])
    assert executor.run("q") == "seventy-five"
    assert tongyi.requests[0].body.get("stream") is True
    assert len(handler.tokens) > 1 and "".join(handler.tokens) == reply
    (generation,), = handler.ends[0].generations
    assert generation.text == reply and generation.message.content == reply
    assert handler.ends[0].llm_output["token_usage"]["total_tokens"] > 0
    tongyi.add_reply("Final Answer: x")
    quiet = Streamed()
    initialize_agent([], ChatTongyi(), REACT, callbacks=[quiet]).run("q")
    assert quiet.tokens == []  # (agentcli streams the wire anyway, to cut at stop strings)


def test_callback_manager_configure(capsys: pytest.CaptureFixture[str]) -> None:
    from agentcli.compat import CallbackManager

    handler = Streamed()
    manager = CallbackManager.configure([handler], None, verbose=True, inheritable_tags=["t"])
    assert manager.tags == ["t"] and len(manager.handlers) == 2  # the handler and stdout's
    initialize_agent([], FakeChatModel(["Final Answer: ok"]), REACT,
                     callback_manager=manager).run("q")
    assert len(handler.ends) == 1
    assert "> Entering new AgentExecutor chain..." in capsys.readouterr().out
    older = CallbackManager.configure(callbacks=handler, local_callbacks=[Streamed()])
    assert older.handlers[0] is handler and len(older.handlers) == 2


def test_tool_calling_actions_are_message_logs() -> None:
    from agentcli.compat import AgentActionMessageLog
    from agentcli.schema import ChatResult as Reply
    from agentcli.schema import ToolCall as Call

    llm = FakeChatModel([Reply("", (Call("c1", "echo", '{"input": "hi"}'),)), "done"])
    result = initialize_agent([echo_tool()], llm, AgentType.TOOL_CALLING,
                              return_intermediate_steps=True).invoke("q")
    action, observation = result["intermediate_steps"][0]
    assert isinstance(action, AgentActionMessageLog) and observation == "echo: hi"
    (message,) = action.message_log
    assert message.tool_calls[0]["id"] == "c1" and message.tool_calls[0]["name"] == "echo"
    text_action = initialize_agent([echo_tool()], FakeChatModel(
        ["Action: echo\nAction Input: a", "Final Answer: b"]), REACT,
        return_intermediate_steps=True).invoke("q")["intermediate_steps"][0][0]
    assert not isinstance(text_action, AgentActionMessageLog)  # a text agent's has no messages


def test_llm_math_keeps_langchains_description_in_the_compat_layer(tongyi: Any) -> None:
    from agentcli.compat import load_tools
    from agentcli.tools import load_tools as cli_load_tools

    tongyi.add_reply("Final Answer: 75")
    llm = ChatTongyi(temperature=0)
    tools = load_tools(["llm-math"], llm=llm)
    initialize_agent(tools, llm, AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION).run("q")
    system = tongyi.requests[0].body["messages"][0]["content"]
    assert "\nCalculator: Useful for when you need to answer questions about math.\n" in system
    assert tools[0].run("300 * 0.25") == "Answer: 75.0"  # the same tool otherwise
    assert cli_load_tools(["llm-math"], llm=llm)[0].description != tools[0].description


# -- item 6: LangChain's memory objects, and memory= on the executor -----------------------
def test_buffer_memory_as_seed_002_describes_it() -> None:
    from agentcli.compat import AIMessage, ConversationBufferMemory, HumanMessage

    memory = ConversationBufferMemory()
    assert memory.memory_variables == ["history"]
    memory.save_context({"input": "hi"}, {"output": "hello"})
    memory.save_context({"question": "and you?"}, {"answer": "fine"})  # the one key of each
    assert memory.load_memory_variables({}) == {
        "history": "Human: hi\nAI: hello\nHuman: and you?\nAI: fine"}
    chat = ConversationBufferMemory(memory_key="chat_history", return_messages=True,
                                    human_prefix="User")
    chat.save_context({"input": "hi"}, {"output": "hello"})
    human, ai = chat.load_memory_variables({"input": "next"})["chat_history"]
    assert isinstance(human, HumanMessage) and isinstance(ai, AIMessage)
    assert (human.content, ai.content) == ("hi", "hello")
    with pytest.raises(ValueError, match="one input key expected"):
        memory.save_context({"a": "1", "b": "2"}, {"output": "x"})
    memory.clear()
    assert memory.load_memory_variables({}) == {"history": ""}


def test_an_executor_with_memory_shows_the_turns_and_saves_them(tongyi: Any) -> None:
    from agentcli.compat import ConversationBufferMemory, ConversationBufferWindowMemory

    for reply in ("Final Answer: Hello Ann", "Final Answer: You are Ann", "Final Answer: 3",
                  "Final Answer: 4"):
        tongyi.add_reply(reply)
    memory = ConversationBufferMemory(memory_key="chat_history", return_messages=True)
    executor = initialize_agent([echo_tool()], ChatTongyi(),
                                AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION, memory=memory)
    assert executor.run("I am Ann") == "Hello Ann"
    assert executor.invoke({"input": "Who am I?"})["output"] == "You are Ann"
    second = [(m["role"], m["content"]) for m in tongyi.requests[1].body["messages"][1:3]]
    assert second == [("user", "I am Ann"), ("assistant", "Hello Ann")]
    assert len(memory.load_memory_variables({})["chat_history"]) == 4
    window = ConversationBufferWindowMemory(k=1, memory_key="chat_history")
    executor = initialize_agent([], ChatTongyi(), AgentType.CONVERSATIONAL_REACT_DESCRIPTION,
                                memory=window)
    executor.run("1 + 2?")
    executor.run("2 + 2?")
    assert window.load_memory_variables({}) == {"chat_history": "Human: 2 + 2?\nAI: 4"}
    assert len(tongyi.requests) == 4  # the memory asks nothing of the model


def test_summary_memory_is_written_by_the_model_once_a_turn(tongyi: Any) -> None:
    from agentcli.compat import ConversationSummaryMemory

    llm = ChatTongyi()
    memory = ConversationSummaryMemory(llm=llm, memory_key="chat_history")
    tongyi.add_reply("Final Answer: Hello Ann")
    tongyi.add_reply("Ann introduced herself.")  # the summary, the run's last request
    executor = initialize_agent([], llm, AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION,
                                memory=memory)
    assert executor.run("I am Ann") == "Hello Ann"
    assert len(tongyi.requests) == 2
    assert "I am Ann" in tongyi.requests[1].body["messages"][-1]["content"]
    assert memory.load_memory_variables({}) == {"chat_history": "Ann introduced herself."}
    tongyi.add_reply("Final Answer: You are Ann")
    tongyi.add_reply("Ann asked who she is.")
    executor.run("Who am I?")
    shown = tongyi.requests[2].body["messages"]
    assert any("Ann introduced herself." in m["content"] for m in shown)
    tongyi.add_reply("Ann left.")
    memory.save_context({"input": "bye"}, {"output": "bye Ann"})  # by hand: one request
    assert len(tongyi.requests) == 5 and memory.buffer == "Ann left."


# -- item 7: plan() agents, a Runnable as the agent, create_react_agent(...).invoke ----------
def test_a_single_action_plan_agent_runs_in_the_executor(
        capsys: pytest.CaptureFixture[str]) -> None:
    from agentcli.compat import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent

    class FakeAgent(BaseSingleActionAgent):
        @property
        def input_keys(self) -> list[str]:
            return ["input"]

        def plan(self, intermediate_steps: Any, **kwargs: Any) -> Any:
            if intermediate_steps:
                return AgentFinish({"output": intermediate_steps[-1][1]}, "done")
            return AgentAction(tool="echo", tool_input=kwargs["input"], log="echoing")

    hooks = Hooks()
    executor = AgentExecutor.from_agent_and_tools(agent=FakeAgent(), tools=[echo_tool()],
                                                  verbose=True, callbacks=[hooks])
    assert executor.run("hello") == "echo: hello"
    assert hooks.seen == [("action", ("echo", "hello", "echoing")),
                          ("tool_start", ("echo", "hello")), ("tool_end", "echo: hello")]
    out = capsys.readouterr().out  # LangChain's: the log, the result (no prefixes), the end
    assert out == ("\n\n\x1b[1m> Entering new AgentExecutor chain...\x1b[0m\n"
                   f"{GREEN}echoing{END}\x1b[36;1m\x1b[1;3mecho: hello{END}{GREEN}done{END}\n"
                   "\n\x1b[1m> Finished chain.\x1b[0m\n")
    looping = AgentExecutor(agent=type("Loops", (BaseSingleActionAgent,), {
        "plan": lambda self, steps, **kw: AgentAction("echo", str(len(steps)), "")})(),
        tools=[echo_tool()], max_iterations=3)
    assert looping.invoke("q")["output"] == "Agent stopped due to iteration limit or time limit."

    class Thrice(BaseSingleActionAgent):  # the same call three times, on purpose
        def plan(self, intermediate_steps: Any, **kwargs: Any) -> Any:
            if len(intermediate_steps) < 3:
                return AgentAction("echo", "same", "")
            return AgentFinish({"output": f"{len(intermediate_steps)} calls"}, "")

    calls: list[str] = []
    counted = Tool(name="echo", func=lambda text: calls.append(text) or f"call {len(calls)}",
                   description="Counts its calls.")
    thrice = AgentExecutor(agent=Thrice(), tools=[counted], return_intermediate_steps=True,
                           callbacks=[heard := Streamed()])
    result = thrice.invoke("q")
    assert result["output"] == "3 calls" and calls == ["same"] * 3  # each call ran, as there
    assert [o for _, o in result["intermediate_steps"]] == ["call 1", "call 2", "call 3"]
    assert result.model_calls == 0 and result.usage.total_tokens == 0  # a plan is no model call
    assert heard.ends == []  # handlers hear no model call either


def test_a_multi_action_plan_agent_runs_its_actions() -> None:
    from agentcli.compat import AgentAction, AgentExecutor, AgentFinish, BaseMultiActionAgent

    class Both(BaseMultiActionAgent):
        def plan(self, intermediate_steps: Any, **kwargs: Any) -> Any:
            if intermediate_steps:
                return AgentFinish({"output": " | ".join(o for _, o in intermediate_steps)}, "")
            return [AgentAction("echo", "a", ""), AgentAction("echo", "b", "")]

    result = AgentExecutor(agent=Both(), tools=[echo_tool()],
                           return_intermediate_steps=True).invoke({"input": "q"})
    assert result["output"] == "echo: a | echo: b" and len(result["intermediate_steps"]) == 2


def test_llm_single_action_agent_with_its_template_and_parser(
        tongyi: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from agentcli.compat import (
        AgentAction,
        AgentExecutor,
        AgentFinish,
        AgentOutputParser,
        LLMChain,
        LLMSingleActionAgent,
        StringPromptTemplate,
    )

    class CustomPromptTemplate(StringPromptTemplate):
        template: str
        tools: list[Tool]

        def format(self, **kwargs: Any) -> str:
            thoughts = ""
            for action, observation in kwargs.pop("intermediate_steps"):
                thoughts += action.log + f"\nObservation: {observation}\nThought: "
            kwargs["agent_scratchpad"] = thoughts
            kwargs["tools"] = "\n".join(f"{t.name}: {t.description}" for t in self.tools)
            return self.template.format(**kwargs)

    class CustomOutputParser(AgentOutputParser):
        def parse(self, llm_output: str) -> Any:
            if "Final Answer:" in llm_output:
                return AgentFinish({"output": llm_output.split("Final Answer:")[-1].strip()},
                                   llm_output)
            match = re.search(r"Action: (.*?)[\n]*Action Input:[\s]*(.*)", llm_output, re.S)
            if not match:
                raise ValueError(f"Could not parse LLM output: `{llm_output}`")
            return AgentAction(match.group(1).strip(), match.group(2).strip(" \""), llm_output)

    tools = [echo_tool()]
    prompt = CustomPromptTemplate(template="Tools:\n{tools}\nQuestion: {input}\n{agent_scratchpad}",
                                  tools=tools, input_variables=["input", "intermediate_steps"])
    tongyi.add_reply("Thought: echo it\nAction: echo\nAction Input: hi")
    tongyi.add_reply("Final Answer: it said hi")
    agent = LLMSingleActionAgent(llm_chain=LLMChain(llm=ChatTongyi(), prompt=prompt),
                                 output_parser=CustomOutputParser(), stop=["\nObservation:"],
                                 allowed_tools=["echo"])
    executor = AgentExecutor.from_agent_and_tools(agent=agent, tools=tools, verbose=True)
    assert executor.run("say hi") == "it said hi" and len(tongyi.requests) == 2
    out = plain(capsys.readouterr().out)  # LangChain's: stop[0] before the result, "" after
    assert ("Action Input: hi\n\nObservation:echo: hi\nFinal Answer: it said hi\n\n"
            "> Finished chain.\n") in out
    first, second = (r.body for r in tongyi.requests)
    assert first["messages"][0]["content"] == ("Tools:\necho: Repeats its input.\n"
                                               "Question: say hi\n")
    assert first["stop"][0] == "\nObservation:"
    assert second["messages"][0]["content"].endswith(
        "Action Input: hi\nObservation: echo: hi\nThought: ")


def test_a_runnable_as_the_agent_and_create_react_agents_invoke(tongyi: Any) -> None:
    from agentcli.compat import (
        AgentAction,
        AgentExecutor,
        AgentFinish,
        RunnableLambda,
        create_react_agent,
        hub,
    )

    def step(inputs: dict[str, Any]) -> Any:
        if inputs["intermediate_steps"]:
            return AgentFinish({"output": inputs["intermediate_steps"][0][1].upper()}, "")
        return AgentAction("echo", inputs["input"], "")

    runnable = RunnableLambda(step)
    assert AgentExecutor(agent=runnable, tools=[echo_tool()]).run("hi") == "ECHO: HI"
    tongyi.add_reply("Thought: echo\nAction: echo\nAction Input: hi")
    tongyi.add_reply("Final Answer: done")
    agent = create_react_agent(ChatTongyi(), [echo_tool()], hub.pull("hwchase17/react"))
    action = agent.invoke({"input": "say hi", "intermediate_steps": []})
    assert isinstance(action, AgentAction) and (action.tool, action.tool_input) == ("echo", "hi")
    finish = agent.invoke({"input": "say hi", "intermediate_steps": [(action, "echo: hi")]})
    assert isinstance(finish, AgentFinish) and finish.return_values["output"] == "done"
    assert "Observation: echo: hi" in tongyi.requests[1].body["messages"][0]["content"]
    assert len(tongyi.requests) == 2


# -- item 8: the chat agent's prompt in LangChain's shape -----------------------------------
SEED_ACTION = ('Thought: I need to calculate 25% of 300.\nAction:\n```\n{"action": "Calculator", '
               '"action_input": "300 * 0.25"}\n```')


def test_seed_000_with_compat_imports_sends_langchains_prompt_shape(
        tongyi: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from agentcli.compat.prompts import PREVIOUS_WORK

    tongyi.add_reply(SEED_ACTION)
    tongyi.add_reply("Thought: I now know the final answer.\nFinal Answer: 75")
    # -- the seed's program; only the imports are agentcli's --------------------------------
    from agentcli.compat import AgentType, ChatTongyi, initialize_agent, load_tools

    llm = ChatTongyi(temperature=0)
    tools = load_tools(["llm-math", "wikipedia"], llm=llm)
    agent = initialize_agent(
        tools,
        llm,
        agent=AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION,
        handle_parsing_errors=True,
        verbose=True,
    )
    result = agent.invoke("What is the 25% of 300?")
    # -- LangChain's requests: a system prompt and one human message, the work as text ------
    assert result["output"] == "75" and len(tongyi.requests) == 2
    first, second = (r.body["messages"] for r in tongyi.requests)
    assert [m["role"] for m in first] == [m["role"] for m in second] == ["system", "user"]
    assert "\nCalculator: Useful for when you need to answer questions about math.\n" in (
        first[0]["content"])
    assert first[1]["content"] == "What is the 25% of 300?\n\n"
    assert second[1]["content"] == (f"What is the 25% of 300?\n\n{PREVIOUS_WORK}\n{SEED_ACTION}"
                                    "\nObservation: Answer: 75.0\nThought:")
    assert tongyi.requests[0].body["stop"][0] == "Observation:"
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert f"{SEED_ACTION}\nObservation: Answer: 75.0\nThought:Thought: I now know" in out


def test_chat_agent_prefixes_partial_and_the_scratchpad_template() -> None:
    from agentcli.compat import (
        AgentAction,
        AgentScratchPadChatPromptTemplate,
        ChatAgent,
        ChatPromptTemplate,
        PromptTemplate,
        hub,
    )
    from agentcli.compat.prompts import PREVIOUS_WORK

    assert (ChatAgent.observation_prefix, ChatAgent.llm_prefix) == ("Observation: ", "Thought:")
    llm = FakeChatModel(['Action:\n```\n{"action": "echo", "action_input": "a"}\n```',
                         "Final Answer: b"])
    agent = ChatAgent.from_llm_and_tools(llm, [echo_tool()],
                                         human_message="{agent_scratchpad}\n\nQ: {input}")
    assert (agent.observation_prefix, agent.llm_prefix) == ("Observation: ", "Thought:")
    from agentcli.compat import AgentExecutor

    assert AgentExecutor(agent=agent, tools=[echo_tool()]).run("why?") == "b"
    human = llm.requests[1].messages[1].content  # the pad may sit anywhere in human_message
    assert human.startswith(PREVIOUS_WORK) and human.endswith("Thought:\n\nQ: why?")

    react = hub.pull("hwchase17/react").partial(tools="echo: Repeats.", tool_names="echo")
    assert react.input_variables == ["agent_scratchpad", "input"]
    assert "echo: Repeats." in react.format(input="q", agent_scratchpad="")
    assert PromptTemplate.from_template("{a} {b}").partial(a=1).format(b=2) == "1 2"
    chat = ChatPromptTemplate.from_messages([("system", "In {lang}."), ("human", "{input}")])
    assert chat.partial(lang="French").format_messages(input="hi")[0].content == "In French."

    pad = AgentScratchPadChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "{input}\n\n{agent_scratchpad}")])
    _, empty = pad.format_messages(input="q", intermediate_steps=[])
    assert empty.content == "q\n\n"
    _, worked = pad.format_messages(
        input="q", intermediate_steps=[(AgentAction("echo", "a", "I echo a"), "echo: a")])
    assert worked.content == f"q\n\n{PREVIOUS_WORK}\nI echo a\nObservation: echo: a\nThought: "


def test_chat_memory_adds_a_turn_by_its_halves() -> None:
    from agentcli.compat import (
        AIMessage,
        ChatMessageHistory,
        ConversationBufferMemory,
        ConversationBufferWindowMemory,
    )

    history = ChatMessageHistory()
    history.add_user_message("hi")
    assert [m.content for m in history.messages] == ["hi"]  # waiting for its answer
    history.add_ai_message("hello")
    memory = ConversationBufferMemory(chat_memory=history)
    memory.chat_memory.add_user_message("and you?")
    memory.chat_memory.add_message(AIMessage("fine"))
    assert memory.buffer == "Human: hi\nAI: hello\nHuman: and you?\nAI: fine"
    assert memory.chat_memory is history and len(history.messages) == 4
    window = ConversationBufferWindowMemory(k=1)
    window.chat_memory.add_user_message("a")
    window.chat_memory.add_ai_message("b")
    window.save_context({"input": "c"}, {"output": "d"})
    assert window.load_memory_variables({}) == {"history": "Human: c\nAI: d"}
    window.clear()
    assert window.chat_memory.messages == []


def test_a_run_without_an_answer_adds_no_turn_to_memory() -> None:
    from agentcli.compat import AgentExecutor, ConversationBufferMemory

    class Silent(AgentExecutor):
        def _call(self, inputs: dict[str, Any], run_manager: Any = None) -> dict[str, Any]:
            return {"output": None}  # LangChain code may return no answer

    memory = ConversationBufferMemory()
    silent = Silent(agent=initialize_agent([], FakeChatModel([]), REACT).agent, tools=[],
                    memory=memory)
    assert silent.invoke("q")["output"] is None
    assert memory.load_memory_variables({}) == {"history": ""}


def test_a_custom_models_run_manager_streams_its_tokens() -> None:
    from agentcli.compat import (
        AIMessage,
        BaseChatModel,
        CallbackManagerForLLMRun,
        ChatGeneration,
        ChatResult,
    )

    class Words(BaseChatModel):
        streaming = True

        def _generate(self, messages: Any, stop: Any = None,
                      run_manager: CallbackManagerForLLMRun | None = None,
                      **kwargs: Any) -> ChatResult:
            text = "Final Answer: one two"
            for word in text.split(" "):
                if run_manager:
                    run_manager.on_llm_new_token(word + " ")
            return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    heard = Streamed()
    assert initialize_agent([], Words(), REACT, callbacks=[heard]).run("q") == "one two"
    assert heard.tokens == ["Final ", "Answer: ", "one ", "two "]  # as the model sent them
    quiet = Streamed()
    Words.streaming = False
    initialize_agent([], Words(), REACT, callbacks=[quiet]).run("q")
    assert quiet.tokens == [] and len(quiet.ends) == 1


def test_a_plan_that_cannot_decide_is_a_parse_error_step() -> None:
    from agentcli.compat import (
        AgentExecutor,
        AgentFinish,
        BaseSingleActionAgent,
        OutputParserException,
    )

    class Unsure(BaseSingleActionAgent):
        def plan(self, intermediate_steps: Any, **kwargs: Any) -> Any:
            if not intermediate_steps:
                raise OutputParserException("no idea", llm_output="hmm")
            (action, told), = intermediate_steps
            return AgentFinish({"output": f"{action.tool}: {told}"}, "")

    hooks = Hooks()
    result = AgentExecutor(agent=Unsure(), tools=[], handle_parsing_errors="try again",
                           callbacks=[hooks]).invoke("q")
    assert result["output"] == "_Exception: try again"
    assert hooks.seen[0] == ("action", ("_Exception", "try again", "hmm"))
    with pytest.raises(OutputParserException, match="no idea"):
        AgentExecutor(agent=Unsure(), tools=[]).invoke("q")  # not handled: raised, as there


# -- a ported program, run as a user runs it: its own process, stdout piped ----------------
PROGRAM = '''
from typing import Optional

from agentcli.compat import (AgentType, BaseTool, CallbackManagerForToolRun, ChatTongyi,
                             ConversationBufferMemory, initialize_agent)


class Lookup(BaseTool):
    name = "lookup"
    description = "Looks a word up."

    def _run(self, query: str, run_manager: Optional[CallbackManagerForToolRun] = None) -> str:
        if run_manager:
            run_manager.on_text(f"Searching for: {query}", verbose=True)
        return f"{query} means hello"


memory = ConversationBufferMemory(memory_key="chat_history", return_messages=True)
agent = initialize_agent([Lookup()], ChatTongyi(temperature=0),
                         agent=AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION,
                         memory=memory, verbose=True)
print(agent.run("What does ciao mean?"))
print(agent({"input": "And in one word?"}, return_only_outputs=True))
print(len(memory.load_memory_variables({})["chat_history"]))
'''


def test_a_ported_program_in_its_own_process(tongyi: Any, tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    tongyi.add_reply('```json\n{"action": "lookup", "action_input": "ciao"}\n```')
    tongyi.add_reply('```json\n{"action": "Final Answer", "action_input": "It means hello."}\n```')
    tongyi.add_reply('```json\n{"action": "Final Answer", "action_input": "Hello."}\n```')
    script = tmp_path / "program.py"
    script.write_text(PROGRAM, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    blob = '```json\n{"action": "Final Answer", "action_input": "%s"}\n```'
    assert plain(proc.stdout) == (  # LangChain's verbose trace, then the program's prints
        "\n\n> Entering new AgentExecutor chain...\n"
        '```json\n{"action": "lookup", "action_input": "ciao"}\n```Searching for: ciao\n'
        "Observation: ciao means hello\nThought:" + blob % "It means hello." + "\n\n"
        "> Finished chain.\nIt means hello.\n"
        "\n\n> Entering new AgentExecutor chain...\n" + blob % "Hello." + "\n\n"
        "> Finished chain.\n{'output': 'Hello.'}\n4\n")
    assert len(tongyi.requests) == 3
    third = tongyi.requests[2].body["messages"]
    assert [m["content"] for m in third[1:3]] == ["What does ciao mean?", "It means hello."]

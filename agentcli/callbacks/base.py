"""The callback handler base class: every hook does nothing unless overridden.

Handlers subscribe to the run's event stream (:mod:`agentcli.events`): :meth:`on_event`
receives each typed event; the ``on_*`` hooks are the same events in LangChain's shape,
for code written against that API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.schema import AgentAction, AgentFinish, ChatResult, Message

if TYPE_CHECKING:
    from agentcli.events import RunEvent, ToolInput


class BaseCallbackHandler:
    """Receives run events. Subclass and override only the hooks you need."""

    # LangChain's opt-outs: True mutes those hooks (and those events in ``on_event``);
    # ``ignore_chat_model`` mutes ``on_llm_start`` only (every model here is a chat model)
    ignore_llm: bool = False
    ignore_chat_model: bool = False
    ignore_chain: bool = False
    ignore_agent: bool = False
    ignore_retriever: bool = False  # no retrievers here: nothing to mute
    ignore_retry: bool = False
    ignore_custom_event: bool = False
    raise_error: bool = False  # a failing handler is logged, never raised, whatever this says
    run_inline: bool = False

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Any event of the run, typed (see :mod:`agentcli.events`)."""

    def on_chain_start(self, inputs: dict[str, Any], **kw: object) -> None:
        """A run started."""

    def on_chain_end(self, outputs: dict[str, Any], **kw: object) -> None:
        """A run ended with an answer (or a stop)."""

    def on_chain_error(self, error: BaseException, **kw: object) -> None:
        """A run failed."""

    def on_llm_start(self, messages: list[Message], **kw: object) -> None:
        """A model request is about to be sent."""

    def on_llm_new_token(self, token: str, **kw: object) -> None:
        """A streamed token arrived."""

    def on_llm_end(self, result: ChatResult, **kw: object) -> None:
        """A model request completed."""

    def on_llm_error(self, error: BaseException, **kw: object) -> None:
        """A model request failed."""

    def on_agent_action(self, action: AgentAction, **kw: object) -> None:
        """The agent chose a tool."""

    def on_agent_finish(self, finish: AgentFinish, **kw: object) -> None:
        """The agent gave its final answer."""

    def on_tool_start(self, tool: str, tool_input: ToolInput, **kw: object) -> None:
        """A tool is about to run."""

    def on_tool_end(self, observation: str, **kw: object) -> None:
        """A tool returned; ``observation`` is what the model will read."""

    def on_tool_error(self, error: BaseException, **kw: object) -> None:
        """A tool raised (its error becomes the observation)."""

    def on_text(self, text: str, **kw: object) -> None:
        """Free-form text worth showing (notices, parse-error recoveries, limits)."""

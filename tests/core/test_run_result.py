"""RunResult is a frozen dataclass and LangChain's result dict at once; copies keep both."""

from __future__ import annotations

import copy
import pickle

import pytest

from agentcli.schema import AgentAction, AgentStep, ChatResult, Message, RunResult, Usage


def sample() -> RunResult:
    step = AgentStep(AgentAction("calc", "2+2", "log"), "4")
    return RunResult("4", (step,), "finished", Usage(3, 5), model_calls=2,
                     state={"input": "2+2?", "topic": "math", "messages": [Message("user", "hi")]})


@pytest.mark.parametrize("clone", [
    *(lambda r, p=p: pickle.loads(pickle.dumps(r, p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)),
    copy.copy, copy.deepcopy,
])
def test_a_result_survives_pickle_and_copy_as_dataclass_and_dict(clone: object) -> None:
    result = sample()
    again = clone(result)  # type: ignore[operator]
    assert isinstance(again, RunResult) and again == result
    assert (again.output, again.usage, again.steps) == (result.output, result.usage, result.steps)
    assert dict(again) == dict(result) and repr(again) == repr(result)
    assert again["topic"] == "math" and again["messages"] == result["messages"]
    assert again.to_dict() == result.to_dict()


def test_to_dict_counts_tokens_once() -> None:
    usage = sample().to_dict()["usage"]
    assert usage == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8,
                     "model_calls": 2}
    llm = ChatResult("x", usage=Usage(3, 5), model="m").llm_output
    assert llm == {"token_usage": {"prompt_tokens": 3, "completion_tokens": 5,
                                   "total_tokens": 8}, "model_name": "m"}

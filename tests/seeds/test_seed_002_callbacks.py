"""Seed 002's performance-monitoring callback handler, as the seed writes it (only the import
lines are agentcli's), attached to a run: LangChain's hook signatures (``serialized`` first,
``run_id``), ``response.llm_output["token_usage"]`` and ``get_metrics_summary``."""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Dict, List, Union
from uuid import UUID

import numpy as np

from agentcli.compat import BaseCallbackHandler, LLMResult, Tool, initialize_agent
from agentcli.models.fake import FakeChatModel


# -- the seed's handler, as written --------------------------------------------------------
class PerformanceCallbackHandler(BaseCallbackHandler):
    """性能监控回调处理器"""

    def __init__(self):
        self.start_times: Dict[UUID, float] = {}
        self.metrics: Dict[str, List[float]] = defaultdict(list)
        self.error_counts: Dict[str, int] = defaultdict(int)
        self.total_counts: Dict[str, int] = defaultdict(int)

    def on_llm_start(self, serialized: Dict[str, Any], prompts: List[str], *, run_id: UUID, **kwargs: Any) -> None:
        """记录 LLM 开始时间"""
        self.start_times[run_id] = time.time()
        self.total_counts["llm"] += 1

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """计算 LLM 执行时间和 Token 使用"""

        # 计算执行时间
        if run_id in self.start_times:
            duration = time.time() - self.start_times[run_id]
            self.metrics["llm_duration"].append(duration)
            del self.start_times[run_id]

        # 记录 Token 使用
        if response.llm_output and "token_usage" in response.llm_output:
            token_usage = response.llm_output["token_usage"]

            for key, value in token_usage.items():
                self.metrics[f"tokens_{key}"].append(value)

    def on_llm_error(self, error: Union[Exception, KeyboardInterrupt], *, run_id: UUID, **kwargs: Any) -> None:
        """记录 LLM 错误"""
        self.error_counts["llm"] += 1

        # 清理开始时间
        if run_id in self.start_times:
            del self.start_times[run_id]

    def on_tool_start(self, serialized: Dict[str, Any], input_str: str, *, run_id: UUID, **kwargs: Any) -> None:
        """记录工具开始时间"""
        self.start_times[run_id] = time.time()
        tool_name = serialized.get("name", "unknown_tool")
        self.total_counts[f"tool_{tool_name}"] += 1

    def on_tool_end(self, output: str, *, run_id: UUID, **kwargs: Any) -> None:
        """计算工具执行时间"""
        if run_id in self.start_times:
            duration = time.time() - self.start_times[run_id]
            self.metrics["tool_duration"].append(duration)
            del self.start_times[run_id]

    def on_tool_error(self, error: Union[Exception, KeyboardInterrupt], *, run_id: UUID, **kwargs: Any) -> None:
        """记录工具错误"""
        self.error_counts["tool"] += 1

        if run_id in self.start_times:
            del self.start_times[run_id]

    def get_metrics_summary(self) -> Dict[str, Any]:
        """获取指标摘要"""
        summary = {}

        # 性能指标
        for metric_name, values in self.metrics.items():
            if values:
                summary[metric_name] = {
                    "count": len(values),
                    "total": sum(values),
                    "avg": sum(values) / len(values),
                    "min": min(values),
                    "max": max(values),
                    "p50": np.percentile(values, 50) if len(values) > 1 else values[0],
                    "p95": np.percentile(values, 95) if len(values) > 1 else values[0],
                    "p99": np.percentile(values, 99) if len(values) > 1 else values[0],
                }

        # 错误率
        for component, error_count in self.error_counts.items():
            total_count = self.total_counts.get(component, 0)
            if total_count > 0:
                summary[f"{component}_error_rate"] = error_count / total_count

        return summary

    def reset_metrics(self):
        """重置指标"""
        self.start_times.clear()
        self.metrics.clear()
        self.error_counts.clear()
        self.total_counts.clear()


# -- attached to a run ---------------------------------------------------------------------
def test_seed_002_performance_handler_measures_a_run() -> None:
    def broken(text: str) -> str:
        raise RuntimeError("no weather today")

    handler = PerformanceCallbackHandler()
    llm = FakeChatModel(["Action: weather\nAction Input: Rome", "Action: echo\nAction Input: hi",
                         "Final Answer: done"])
    tools = [Tool("weather", "Weather.", func=broken), Tool("echo", "Echo.", func=lambda s: s)]
    result = initialize_agent(tools, llm, "zero-shot-react-description",
                              callbacks=[handler]).invoke("q")
    assert result["output"] == "done"
    summary = handler.get_metrics_summary()
    assert summary["llm_duration"]["count"] == 3
    assert summary["tool_duration"]["count"] == 1  # the failing call ended in on_tool_error
    assert summary["tokens_total_tokens"]["count"] == 3 and summary["tokens_total_tokens"]["min"] > 0
    assert handler.total_counts["tool_weather"] == 1 and handler.total_counts["tool_echo"] == 1
    assert handler.error_counts["tool"] == 1 and handler.total_counts["llm"] == 3


def test_seed_002_handler_keeps_a_tools_duration_when_the_tool_calls_the_model() -> None:
    from agentcli.compat import load_tools

    handler = PerformanceCallbackHandler()
    llm = FakeChatModel(['Action:\n```\n{"action": "Calculator", '
                         '"action_input": "300 apples and 25 pears"}\n```',
                         "```text\n300 + 25\n```", "Final Answer: 325"])
    tools = load_tools(["llm-math"], llm=llm)
    result = initialize_agent(tools, llm, "chat-zero-shot-react-description",
                              callbacks=[handler]).invoke("q")
    assert result["output"] == "325"
    summary = handler.get_metrics_summary()
    assert summary["llm_duration"]["count"] == 3  # the agent's two and the tool's own
    assert summary["tool_duration"]["count"] == 1  # not lost to the tool's model call
    assert handler.start_times == {}

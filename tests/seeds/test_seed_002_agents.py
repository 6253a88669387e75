"""Seed 002's custom classes, as the seed writes them with only the imports changed: the
``ResilientAgent`` (retries and a fallback answer) and ``MonitoringAgent`` (alerts) that
override ``AgentExecutor._call``, and the ``BaseTool`` subclasses (``DuckDuckGoSearchRun``,
``SQLDatabaseQueryTool``) with class-attribute name/description and ``_run``.

Imports changed: ``langchain.agents.AgentExecutor``, ``langchain.callbacks.manager.
CallbackManagerForChainRun``/``CallbackManagerForToolRun``, ``langchain_core.tools.BaseTool``
-> ``agentcli.compat``; ``pydantic.BaseModel``/``Field`` stay pydantic's."""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import logging
import time
from typing import Any, Dict, List, Optional

import pytest
from pydantic import BaseModel, Field

import agentcli
from agentcli.compat import (
    AgentExecutor,
    BaseCallbackHandler,
    BaseTool,
    CallbackManagerForChainRun,
    CallbackManagerForToolRun,
    create_react_agent,
    hub,
    initialize_agent,
)
from agentcli.errors import ProviderError
from agentcli.models.fake import FakeChatModel

logger = logging.getLogger("seed002")


# -- the seed's classes, as written --------------------------------------------------------
class ResilientAgent(AgentExecutor):
    """弹性 Agent - 带重试和降级"""

    def __init__(self, *args, max_retries: int = 3, retry_delay: float = 1.0, fallback_response: str = "I apologize, but I'm experiencing technical difficulties.", **kwargs):
        super().__init__(*args, **kwargs)
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.fallback_response = fallback_response

    def _call(self, inputs: Dict[str, Any], run_manager: Optional[CallbackManagerForChainRun] = None) -> Dict[str, Any]:
        """带重试的执行"""

        last_exception = None

        for attempt in range(self.max_retries + 1):
            try:
                return super()._call(inputs, run_manager)

            except Exception as e:
                last_exception = e

                if run_manager:
                    run_manager.on_text(f"Attempt {attempt + 1} failed: {str(e)}", color="yellow")

                if attempt < self.max_retries:
                    # 指数退避
                    delay = self.retry_delay * (2 ** attempt)
                    time.sleep(delay)
                else:
                    # 最后一次失败，返回降级响应
                    if run_manager:
                        run_manager.on_text("All retries exhausted, using fallback response", color="red")

                    return {self.output_keys[0]: self.fallback_response}

        # 理论上不会到达这里
        raise last_exception


class MonitoringAgent(AgentExecutor):
    """带监控的 Agent"""

    def __init__(self, *args, alert_thresholds: Optional[Dict[str, float]] = None, **kwargs):
        super().__init__(*args, **kwargs)

        self.alert_thresholds = alert_thresholds or {
            "execution_time": 60.0,    # 60秒
            "error_rate": 0.05,        # 5%
            "tool_failures": 3         # 连续3次工具失败
        }

        self.metrics = {
            "total_executions": 0,
            "total_errors": 0,
            "consecutive_tool_failures": 0,
            "execution_times": []
        }

    def _call(self, inputs: Dict[str, Any], run_manager: Optional[CallbackManagerForChainRun] = None) -> Dict[str, Any]:
        """带监控的执行"""

        start_time = time.time()
        self.metrics["total_executions"] += 1

        try:
            result = super()._call(inputs, run_manager)

            # 重置连续失败计数
            self.metrics["consecutive_tool_failures"] = 0

            return result

        except Exception as e:
            self.metrics["total_errors"] += 1

            # 检查错误率告警
            error_rate = self.metrics["total_errors"] / self.metrics["total_executions"]
            if error_rate > self.alert_thresholds["error_rate"]:
                self._send_alert(f"High error rate: {error_rate:.2%}")

            raise e

        finally:
            # 记录执行时间
            execution_time = time.time() - start_time
            self.metrics["execution_times"].append(execution_time)

            # 检查执行时间告警
            if execution_time > self.alert_thresholds["execution_time"]:
                self._send_alert(f"Long execution time: {execution_time:.2f}s")

    def _send_alert(self, message: str):
        """发送告警"""
        logger.error(f"ALERT: {message}")


class DuckDuckGoSearchAPIWrapper(BaseModel):
    """DuckDuckGo API 封装"""

    region: str = "wt-wt"
    safesearch: str = "moderate"
    time: Optional[str] = None
    max_results: int = 5

    def run(self, query: str) -> str:
        """执行搜索并格式化结果"""
        results = self._ddgs_search(query)

        if not results:
            return "No search results found."

        # 格式化输出
        formatted_results = []
        for result in results[:self.max_results]:
            formatted_results.append(
                f"Title: {result.get('title', 'N/A')}\n"
                f"Link: {result.get('href', 'N/A')}\n"
                f"Snippet: {result.get('body', 'N/A')}\n"
            )

        return "\n".join(formatted_results)

    def _ddgs_search(self, query: str) -> List[Dict[str, Any]]:
        """实际的搜索实现"""  # the test's stand-in for the network call
        return [{"title": f"About {query}", "href": "https://example.org", "body": "sunny"}]


class DuckDuckGoSearchRun(BaseTool):
    """DuckDuckGo 搜索工具"""

    name = "duckduckgo_search"
    description = "A wrapper around DuckDuckGo Search. Useful for when you need to answer questions about current events."

    api_wrapper: DuckDuckGoSearchAPIWrapper = Field(default_factory=DuckDuckGoSearchAPIWrapper)

    def _run(self, query: str, run_manager: Optional[CallbackManagerForToolRun] = None) -> str:
        """执行搜索"""
        try:
            # 调用搜索 API
            results = self.api_wrapper.run(query)

            # 记录搜索过程
            if run_manager:
                run_manager.on_text(f"Searching for: {query}", verbose=True)

            return results

        except Exception as e:
            # 错误处理
            error_msg = f"Search failed: {str(e)}"
            if run_manager:
                run_manager.on_text(error_msg, color="red")
            return error_msg


class SQLDatabase:
    """The test's stand-in for LangChain's SQLDatabase (``run`` returns the rows as text)."""

    def __init__(self, rows: str) -> None:
        self.rows = rows
        self.ran: List[str] = []

    def run(self, query: str) -> str:
        self.ran.append(query)
        return self.rows


class SQLDatabaseQueryTool(BaseTool):
    """SQL 数据库查询工具"""

    name = "sql_db_query"
    description = "Execute a SQL query against the database and get back the result."

    db: SQLDatabase = Field(exclude=True)

    class Config:
        arbitrary_types_allowed = True

    def _run(self, query: str, run_manager: Optional[CallbackManagerForToolRun] = None) -> str:
        """执行 SQL 查询"""

        # 1. 查询验证
        if not self._is_safe_query(query):
            return "Error: Query contains potentially dangerous operations"

        # 2. 记录查询
        if run_manager:
            run_manager.on_text(f"Executing SQL: {query}", verbose=True)

        try:
            # 3. 执行查询
            result = self.db.run(query)

            # 4. 结果处理
            if run_manager:
                run_manager.on_text(f"Query result: {result}", verbose=True)

            return result

        except Exception as e:
            error_msg = f"SQL execution failed: {str(e)}"
            if run_manager:
                run_manager.on_text(error_msg, color="red")
            return error_msg

    def _is_safe_query(self, query: str) -> bool:
        """查询安全检查"""
        query_upper = query.upper().strip()

        # 禁止的操作
        dangerous_keywords = [
            "DROP", "DELETE", "UPDATE", "INSERT",
            "ALTER", "CREATE", "TRUNCATE", "REPLACE"
        ]

        for keyword in dangerous_keywords:
            if keyword in query_upper:
                return False

        return True


# -- the runs ------------------------------------------------------------------------------
def executor_args(*replies: Any) -> dict[str, Any]:
    llm = FakeChatModel(list(replies))
    tools = [DuckDuckGoSearchRun()]
    return {"agent": create_react_agent(llm, tools, hub.pull("hwchase17/react")), "tools": tools}


def test_resilient_agent_retries_then_answers(capsys: pytest.CaptureFixture[str]) -> None:
    down = ProviderError("503 from the provider", provider="fake")
    agent = ResilientAgent(**executor_args(down, "Final Answer: ok"), max_retries=2,
                           retry_delay=0, verbose=True)
    result = agent.invoke({"input": "q"})
    assert result["output"] == "ok" and isinstance(result, dict)
    out = capsys.readouterr().out
    assert "\x1b[33;1m\x1b[1;3mAttempt 1 failed: 503 from the provider" in out  # yellow
    assert out.count("> Entering new ResilientAgent chain...") == 2


def test_resilient_agent_falls_back_when_retries_run_out() -> None:
    down = ProviderError("down", provider="fake")
    agent = ResilientAgent(**executor_args(down, down), max_retries=1, retry_delay=0)
    result = agent.invoke({"input": "q"})
    assert result == {"input": "q",
                      "output": "I apologize, but I'm experiencing technical difficulties."}


def test_monitoring_agent_counts_and_alerts(caplog: pytest.LogCaptureFixture) -> None:
    agent = MonitoringAgent(**executor_args(
        "Action: duckduckgo_search\nAction Input: weather in Rome", "Final Answer: sunny",
        ProviderError("down", provider="fake")), return_intermediate_steps=True)
    result = agent.invoke({"input": "weather?"})
    assert result["output"] == "sunny"
    assert result["intermediate_steps"][0][1].startswith("Title: About weather in Rome")
    with pytest.raises(ProviderError), caplog.at_level(logging.ERROR, "seed002"):
        agent.invoke({"input": "again?"})
    assert agent.metrics["total_executions"] == 2 and agent.metrics["total_errors"] == 1
    assert len(agent.metrics["execution_times"]) == 2
    assert "ALERT: High error rate: 50.00%" in caplog.text


def test_base_tool_subclass_is_a_tool() -> None:
    search = DuckDuckGoSearchRun()
    assert (search.name, search.description[:28]) == ("duckduckgo_search",
                                                      "A wrapper around DuckDuckGo ")
    assert search.run("cats").startswith("Title: About cats")
    llm = FakeChatModel(["Action: duckduckgo_search\nAction Input: dogs", "Final Answer: ok"])
    initialize_agent([search], llm, "zero-shot-react-description").invoke("q")
    assert "duckduckgo_search: A wrapper" in llm.requests[0].messages[0].content
    assert "Title: About dogs" in llm.requests[1].messages[-1].content


def test_the_cores_executor_refuses_a_call_override_naming_middleware() -> None:
    with pytest.raises(TypeError, match=r"Bad overrides _call.*middleware.*agentcli\.compat"):
        class Bad(agentcli.AgentExecutor):
            def _call(self, inputs, run_manager=None):
                return {}


# -- issue 41 item 3: a BaseTool's run_manager.on_text reaches handlers and verbose output ----
class Texts(BaseCallbackHandler):
    def __init__(self):
        self.texts = []

    def on_text(self, text, **kw):
        self.texts.append((text, kw.get("color"), kw.get("tool")))


SQL_STEP = "Thought: ask the db\nAction: sql_db_query\nAction Input: SELECT name FROM pets"


def test_sql_tool_says_what_it_runs_through_its_run_manager(capsys):
    db = SQLDatabase("[('Rex',)]")
    texts = Texts()
    llm = FakeChatModel([SQL_STEP, "Final Answer: Rex"])
    executor = initialize_agent([SQLDatabaseQueryTool(db=db)], llm, "zero-shot-react-description",
                                verbose=True, callbacks=[texts])
    assert executor.invoke("pets?")["output"] == "Rex"
    assert db.ran == ["SELECT name FROM pets"] and len(llm.requests) == 2
    assert texts.texts == [("Executing SQL: SELECT name FROM pets", None, "sql_db_query"),
                           ("Query result: [('Rex',)]", None, "sql_db_query")]
    out = capsys.readouterr().out
    green, blue, end = "\x1b[32;1m\x1b[1;3m", "\x1b[36;1m\x1b[1;3m", "\x1b[0m"
    # LangChain's trace: the tool's text printed as it says it (no line end), then the result
    assert (f"{green}{SQL_STEP}{end}Executing SQL: SELECT name FROM pets"
            f"Query result: [('Rex',)]\nObservation: {blue}[('Rex',)]{end}\nThought:") in out


def test_a_refused_query_and_a_failing_db_say_so_in_red(capsys):
    class Broken(SQLDatabase):
        def run(self, query):
            raise RuntimeError("no such table: pets")

    texts = Texts()
    tool = SQLDatabaseQueryTool(db=Broken(""))
    assert tool.run("DROP TABLE pets", callbacks=[texts]) == (
        "Error: Query contains potentially dangerous operations")
    assert texts.texts == []  # refused before it says anything
    assert tool.run("SELECT 1", callbacks=[texts], verbose=True) == (
        "SQL execution failed: no such table: pets")
    assert texts.texts[-1] == ("SQL execution failed: no such table: pets", "red", "sql_db_query")
    assert "\x1b[31;1m\x1b[1;3mSQL execution failed: no such table: pets\x1b[0m" in (
        capsys.readouterr().out)


def test_search_tool_says_what_it_searches():
    texts = Texts()
    llm = FakeChatModel(["Action: duckduckgo_search\nAction Input: rome", "Final Answer: ok"])
    initialize_agent([DuckDuckGoSearchRun()], llm, "zero-shot-react-description",
                     callbacks=[texts]).invoke("q")
    assert texts.texts == [("Searching for: rome", None, "duckduckgo_search")]

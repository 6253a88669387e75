"""Many questions on the async executor: bounded concurrency, resumable JSONL output, evals.

Input lines are ``{"id"?, "input" | "question", <expect field>?}`` (the id defaults to the
line number); the input may be ``-`` (stdin). Each finished item appends one flushed line to
OUT (secrets redacted): a result ``{"id", "answer", "stop_reason", "steps", "usage", "latency",
"correct"?}`` (``answer`` is null when a limit stopped the item without one) or a structured
error ``{"id", "error": {"type", "kind", "message"}, "latency"}`` where ``kind`` is
``provider``, ``input``, ``config`` or ``internal``. On resume, ids whose last line in OUT is
a result are skipped; ids whose last line is a provider error run again unless
``retry_errors=False``. So an interrupted batch loses nothing it finished.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from agentcli import exit_codes
from agentcli.callbacks.metrics import percentile
from agentcli.errors import AgentCliError, ConfigError, ProviderError
from agentcli.outcome import real_answer
from agentcli.records import record
from agentcli.redact import redact_data
from agentcli.schema import LIMIT_REASONS
from agentcli.structured import ResponseFormat

if TYPE_CHECKING:
    from agentcli.callbacks.base import BaseCallbackHandler
    from agentcli.executor import AgentExecutor

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+")


@record
class BatchItem:
    """One question to run (or a line that could not be read: ``problem`` says why)."""

    id: str
    input: str
    expect: object = None
    problem: str | None = None


@record(frozen=False)
class BatchSummary:
    """What a batch did: counts, accuracy, steps, tokens, latency and stop reasons."""

    total: int = 0
    skipped: int = 0
    results: int = 0
    errors: int = 0
    graded: int = 0
    correct: int = 0
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latencies: list[float] = field(default_factory=list)
    stop_reasons: Counter[str] = field(default_factory=Counter)
    error_types: Counter[str] = field(default_factory=Counter)
    wall: float = 0.0

    def add(self, line: dict[str, Any]) -> None:
        """Count one output line."""
        self.latencies.append(float(line.get("latency") or 0.0))
        if "correct" in line:  # an error line is graded wrong
            self.graded += 1
            self.correct += bool(line["correct"])
        if "error" in line:
            self.errors += 1
            self.error_types[line["error"]["type"]] += 1
            return
        self.results += 1
        self.steps += int(line.get("steps") or 0)
        usage = line.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.stop_reasons[str(line.get("stop_reason"))] += 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""
        done = self.results + self.errors
        return {
            "total": self.total, "skipped": self.skipped, "results": self.results,
            "errors": self.errors, "error_types": dict(self.error_types),
            "accuracy": (self.correct / self.graded) if self.graded else None,
            "graded": self.graded, "correct": self.correct,
            "mean_steps": (self.steps / self.results) if self.results else None,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "latency_p50": percentile(self.latencies, 50),
            "latency_p95": percentile(self.latencies, 95),
            "stop_reasons": dict(self.stop_reasons), "wall_seconds": self.wall,
            "items_per_second": (done / self.wall) if self.wall > 0 else None,
        }


def _input_bytes(path: str | Path) -> bytes:
    """The raw input: a file, or stdin for ``-``."""
    if str(path) == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise ConfigError("the batch input is '-' but nothing is piped in; pipe JSONL "
                              "lines or give a file")
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise ConfigError(f"batch input {path} is a directory; give a JSONL file") from None
    except OSError as err:
        raise ConfigError(f"cannot read batch input {path}: {err.strerror}") from None


def read_items(path: str | Path, *, expect: str | None = None) -> list[BatchItem]:
    """Read the input JSONL (``-`` for stdin); unreadable lines become items with a ``problem``."""
    items: list[BatchItem] = []
    seen: set[str] = set()
    problem: str | None
    for number, raw_bytes in enumerate(_input_bytes(path).splitlines(), 1):
        try:
            raw = raw_bytes.decode("utf-8")
            if not raw.strip():
                continue
            data = json.loads(raw)
        except UnicodeDecodeError as err:  # before ValueError: it is one
            problem = f"line {number} is not UTF-8 text (byte {err.start + 1})"
        except ValueError as err:
            problem = f"line {number} is not JSON: {err}"
        except RecursionError:
            problem = f"line {number} is JSON nested too deeply to read"
        else:
            problem = None
        if problem is not None:
            items.append(BatchItem(str(number), "", problem=problem))
            continue
        if not isinstance(data, dict):
            data = {"input": data} if isinstance(data, str) else {}
        item_id = str(data.get("id", number))
        question = data.get("input", data.get("question"))
        if item_id in seen:
            problem = f"line {number}: duplicate id {item_id!r}"
        elif not isinstance(question, str) or not question.strip():
            problem = f"line {number} has no 'input' (or 'question') string"
        seen.add(item_id)
        items.append(BatchItem(item_id, question if isinstance(question, str) else "",
                               data.get(expect) if expect else None, problem))
    return items


_PROVIDER_TYPES = ("ProviderError", "ModelOutputError", "ReplayMissError")


def check_out_path(out: str | Path) -> None:
    """OUT must be a file we can append to: fail early and clearly otherwise."""
    path = Path(out)
    if path.is_dir():
        raise ConfigError(f"--out {path} is a directory; give a .jsonl file name")
    if not path.parent.is_dir():
        raise ConfigError(f"--out {path}: the folder {path.parent} does not exist")


def last_lines(out: str | Path) -> dict[str, dict[str, Any]]:
    """The last complete line in OUT for each id (a torn or unreadable line does not count)."""
    path = Path(out)
    if not path.is_file():
        return {}
    lines: dict[str, dict[str, Any]] = {}
    for raw in path.read_bytes().decode("utf-8", "replace").splitlines():
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and "id" in data:
            lines[str(data["id"])] = data
    return lines


def line_kind(line: dict[str, Any]) -> str:
    """How an OUT line ended: ``answered``, ``limit``, or its error kind (``provider``, ...)."""
    error = line.get("error")
    if isinstance(error, dict):
        kind = error.get("kind")
        if not kind:  # lines written before errors had a kind
            kind = "provider" if error.get("type") in _PROVIDER_TYPES else "internal"
        return str(kind)
    return "limit" if line.get("stop_reason") in LIMIT_REASONS else "answered"


def finished_ids(out: str | Path, *, retry_errors: bool = False) -> set[str]:
    """Ids that need no new run: every id with a line in OUT, except (with ``retry_errors``)
    those whose last line is a provider error."""
    return {k for k, line in last_lines(out).items()
            if not (retry_errors and line_kind(line) == "provider")}


def exit_code_for(kinds: Iterable[str]) -> int:
    """4 if any item hit a provider error, else 3 if any hit a limit, else 2 for bad input
    lines, 1 for other failures, 0 when every item was answered."""
    found = set(kinds)
    return next((code for kind, code in (
        ("provider", exit_codes.PROVIDER), ("limit", exit_codes.LIMIT), ("input", exit_codes.USAGE),
        ("config", exit_codes.USAGE), ("internal", exit_codes.INTERNAL)) if kind in found),
        exit_codes.OK)


def outcome_counts(out: str | Path, ids: Iterable[str]) -> Counter[str]:
    """How each of ``ids`` stands in OUT now (answered, limit, provider, input, ...)."""
    lines = last_lines(out)
    return Counter(line_kind(lines[i]) if i in lines else "missing" for i in ids)


def normalise(text: str) -> str:
    """Lower case, single spaces, no surrounding quotes or final punctuation."""
    return " ".join(str(text).lower().split()).strip(" \"'`").rstrip(".!")


def _numbers(text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in _NUMBER.findall(str(text))]  # all parse


def is_correct(answer: str, expected: object, *, rel_tol: float = 1e-6) -> bool:
    """Normalised string match, or the same number (within ``rel_tol``) as the answer's."""
    if normalise(answer) == normalise(str(expected)):
        return True
    want = [float(expected)] if isinstance(expected, int | float) else _numbers(str(expected))
    if len(want) != 1:
        return False
    got = _numbers(answer)
    return bool(got) and any(math.isclose(g, want[0], rel_tol=rel_tol, abs_tol=1e-9)
                             for g in (got[-1], got[0]))


async def run_batch(
    executor: AgentExecutor,
    items: Iterable[BatchItem],
    out: str | Path,
    *,
    concurrency: int = 8,
    callbacks: Iterable[BaseCallbackHandler] = (),
    on_line: Callable[[dict[str, Any]], None] | None = None,
    retry_errors: bool = True,
    response_format: Mapping[str, object] | None = None,
) -> BatchSummary:
    """Run every item not yet done in OUT with at most ``concurrency`` at once; append each
    line. With ``retry_errors``, items whose last line is a provider error run again;
    ``response_format`` is every run's output schema (``--schema``)."""
    items = list(items)
    check_out_path(out)
    done = finished_ids(out, retry_errors=retry_errors)
    todo = [i for i in items if i.id not in done]
    summary = BatchSummary(total=len(items), skipped=len(items) - len(todo))
    handlers = list(callbacks)
    fmt = None if response_format is None else ResponseFormat.of(response_format)  # once
    started = time.perf_counter()
    path = Path(out)
    torn = path.exists() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
    with path.open("a", encoding="utf-8") as fh:
        if torn:
            fh.write("\n")  # an interrupted write left half a line: start clean
        pending = iter(todo)  # shared by the workers: each item is taken once

        async def worker() -> None:
            for item in pending:
                line = await _run_item(executor, item, handlers, fmt)
                _append(fh, line)
                summary.add(line)
                if on_line is not None:
                    on_line(line)

        # Model clients are pooled per event loop (models/http_pool.py): nothing to set up.
        workers = max(1, min(concurrency, len(todo) or 1))
        await asyncio.gather(*(worker() for _ in range(workers)))
    summary.wall = time.perf_counter() - started
    return summary


async def _run_item(executor: AgentExecutor, item: BatchItem,
                    handlers: list[BaseCallbackHandler],
                    response_format: ResponseFormat | None = None) -> dict[str, Any]:
    """The OUT line of one item: its result, or its error (one failing item is one error
    line, never a crash), and whether it was right when an answer is expected."""
    line: dict[str, Any] = {"id": item.id}
    answer: str | None = None
    t0 = time.perf_counter()
    if item.problem:
        line["error"] = {"type": "InputError", "kind": "input", "message": item.problem}
    else:
        try:
            result = await executor.ainvoke({"input": item.input}, callbacks=handlers,
                                            response_format=response_format)
        except Exception as err:
            message = str(err) or type(err).__name__
            if not isinstance(err, AgentCliError):
                message = f"internal error: {type(err).__name__}: {message}"
            kind = ("provider" if isinstance(err, ProviderError)
                    else "config" if isinstance(err, ConfigError) else "internal")
            line["error"] = {"type": type(err).__name__, "kind": kind, "message": message}
        else:
            answer = real_answer(result)
            line |= {"answer": answer, "stop_reason": result.stop_reason,
                     "steps": len(result.steps),
                     "usage": {"prompt_tokens": result.usage.prompt_tokens,
                               "completion_tokens": result.usage.completion_tokens,
                               "model_calls": result.model_calls}}
    line["latency"] = 0.0 if item.problem else round(time.perf_counter() - t0, 4)
    if item.expect is not None:
        line["expect"] = item.expect
        line["correct"] = answer is not None and is_correct(answer, item.expect)
    return line


def _append(fh: IO[str], line: dict[str, Any]) -> None:
    fh.write(json.dumps(redact_data(line), ensure_ascii=False) + "\n")
    fh.flush()

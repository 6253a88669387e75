"""Many questions on the async executor: bounded concurrency, resumable JSONL output, evals.

Input lines are ``{"id"?, "input" | "question", <expect field>?}`` (the id defaults to the
line number). Each finished item appends one flushed line to OUT: a result
``{"id", "answer", "stop_reason", "steps", "usage", "latency", "correct"?}`` or a structured
error ``{"id", "error": {"type", "message"}, "latency"}``. Ids already in OUT are skipped,
so an interrupted batch resumes where it stopped and loses nothing it finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentcli.callbacks.metrics import percentile
from agentcli.errors import ConfigError

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+")


@dataclass(frozen=True)
class BatchItem:
    """One question to run (or a line that could not be read: ``problem`` says why)."""

    id: str
    input: str
    expect: Any = None
    problem: str | None = None


@dataclass
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
        if "error" in line:
            self.errors += 1
            self.error_types[line["error"]["type"]] += 1
            if "correct" in line:
                self.graded += 1
            return
        self.results += 1
        self.steps += int(line.get("steps") or 0)
        usage = line.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.stop_reasons[str(line.get("stop_reason"))] += 1
        if "correct" in line:
            self.graded += 1
            self.correct += bool(line["correct"])

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


def read_items(path: str | Path, *, expect: str | None = None) -> list[BatchItem]:
    """Read the input JSONL; unreadable lines become items with a ``problem``."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise ConfigError(f"cannot read batch input {path}: {err.strerror}") from None
    items: list[BatchItem] = []
    seen: set[str] = set()
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError as err:
            items.append(BatchItem(str(number), "", problem=f"line {number} is not JSON: {err}"))
            continue
        if not isinstance(data, dict):
            data = {"input": data} if isinstance(data, str) else {}
        item_id = str(data.get("id", number))
        question = data.get("input", data.get("question"))
        if item_id in seen:
            problem: str | None = f"line {number}: duplicate id {item_id!r}"
        elif not isinstance(question, str) or not question.strip():
            problem = f"line {number} has no 'input' (or 'question') string"
        else:
            problem = None
        seen.add(item_id)
        items.append(BatchItem(item_id, question if isinstance(question, str) else "",
                               data.get(expect) if expect else None, problem))
    return items


def finished_ids(out: str | Path) -> set[str]:
    """Ids that already have a complete line in OUT (a torn last line does not count)."""
    path = Path(out)
    if not path.exists():
        return set()
    ids: set[str] = set()
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if isinstance(data, dict) and "id" in data:
            ids.add(str(data["id"]))
    return ids


def normalise(text: str) -> str:
    """Lower case, single spaces, no surrounding quotes or final punctuation."""
    return " ".join(str(text).lower().split()).strip(" \"'`").rstrip(".!")


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUMBER.findall(str(text)):
        with contextlib.suppress(ValueError):
            out.append(float(m.replace(",", "")))
    return out


def is_correct(answer: str, expected: Any, *, rel_tol: float = 1e-6) -> bool:
    """Normalised string match, or the same number (within ``rel_tol``) as the answer's."""
    if normalise(answer) == normalise(str(expected)):
        return True
    want = [float(expected)] if isinstance(expected, int | float) else _numbers(str(expected))
    if len(want) != 1:
        return False
    got = _numbers(answer)
    return bool(got) and any(math.isclose(g, want[0], rel_tol=rel_tol, abs_tol=1e-9)
                             for g in (got[-1], got[0]))


def _result_line(item: BatchItem, result: Any, latency: float) -> dict[str, Any]:
    line: dict[str, Any] = {
        "id": item.id,
        "answer": result.output,
        "stop_reason": result.stop_reason,
        "steps": len(result.steps),
        "usage": {"prompt_tokens": result.usage.prompt_tokens,
                  "completion_tokens": result.usage.completion_tokens,
                  "model_calls": result.model_calls},
        "latency": round(latency, 4),
    }
    if item.expect is not None:
        line["expect"] = item.expect
        line["correct"] = is_correct(result.output, item.expect)
    return line


def _error_line(item: BatchItem, kind: str, message: str, latency: float) -> dict[str, Any]:
    line: dict[str, Any] = {"id": item.id, "error": {"type": kind, "message": message},
                            "latency": round(latency, 4)}
    if item.expect is not None:
        line["expect"] = item.expect
        line["correct"] = False
    return line


async def run_batch(
    executor: Any,
    items: Iterable[BatchItem],
    out: str | Path,
    *,
    concurrency: int = 8,
    callbacks: Iterable[Any] = (),
    on_line: Callable[[dict[str, Any]], None] | None = None,
) -> BatchSummary:
    """Run every item not yet in OUT with at most ``concurrency`` at once; append each line."""
    items = list(items)
    done = finished_ids(out)
    todo = [i for i in items if i.id not in done]
    summary = BatchSummary(total=len(items), skipped=len(items) - len(todo))
    handlers = list(callbacks)
    started = time.perf_counter()
    path = Path(out)
    torn = path.exists() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
    with path.open("a", encoding="utf-8") as fh:
        if torn:
            fh.write("\n")  # an interrupted write left half a line: start clean

        def emit(line: dict[str, Any]) -> None:
            _append(fh, line)
            summary.add(line)
            if on_line is not None:
                on_line(line)

        queue: asyncio.Queue[BatchItem] = asyncio.Queue()
        for item in todo:
            queue.put_nowait(item)

        async def worker() -> None:
            while not queue.empty():
                item = queue.get_nowait()
                t0 = time.perf_counter()
                if item.problem:
                    emit(_error_line(item, "InputError", item.problem, 0.0))
                    continue
                try:
                    result = await executor.ainvoke({"input": item.input}, callbacks=handlers)
                except Exception as err:  # one failing item is one error line, never a crash
                    message = str(err) or type(err).__name__
                    emit(_error_line(item, type(err).__name__, message, time.perf_counter() - t0))
                else:
                    emit(_result_line(item, result, time.perf_counter() - t0))

        # Model clients are pooled per event loop (models/http_pool.py): nothing to set up.
        workers = max(1, min(concurrency, len(todo) or 1))
        await asyncio.gather(*(worker() for _ in range(workers)))
    summary.wall = time.perf_counter() - started
    return summary


def _append(fh: IO[str], line: dict[str, Any]) -> None:
    fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    fh.flush()

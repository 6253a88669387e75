"""Parser accuracy over the messy-output corpus in ``tests/data``, per format and overall.

    python bench/parsers.py [--failures]

A case is correct when the parser returns what a human reads from the reply: the same kind
(action, finish or error) and the same tool and input, or the same answer. Cases marked
``"refused": true`` expect a parser error on purpose; bench/REFUSED.md says why for each.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentcli.agents.parsers import (  # noqa: E402 - after the path tweak for a checkout
    AgentOutputParser,
    JsonBlobOutputParser,
    ReActOutputParser,
)
from agentcli.errors import OutputParserError  # noqa: E402
from agentcli.schema import AgentFinish  # noqa: E402

FORMATS: dict[str, tuple[str, AgentOutputParser]] = {
    "ReAct text": ("react_outputs.jsonl", ReActOutputParser()),
    "JSON blob": ("json_blob_outputs.jsonl", JsonBlobOutputParser()),
}


def outcome(parser: AgentOutputParser, text: str) -> dict[str, Any]:
    """What the parser read, in the corpus's ``expect`` shape."""
    try:
        result = parser.parse(text)
    except OutputParserError:
        return {"type": "error"}
    if isinstance(result, AgentFinish):
        return {"type": "finish", "output": result.output}
    return {"type": "action", "tool": result.tool, "tool_input": result.tool_input}


def score(file: str, parser: AgentOutputParser) -> dict[str, Any]:
    """Counts, failures and timing for one corpus file."""
    lines = (ROOT / "tests" / "data" / file).read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines]
    failures, timings = [], []
    for case in cases:
        started = time.perf_counter()
        got = outcome(parser, case["text"])
        timings.append((time.perf_counter() - started) * 1000)
        if got != case["expect"]:
            failures.append((case["id"], case["expect"], got))
    return {
        "cases": len(cases),
        "derived": sum(c["id"].startswith("derived-") for c in cases),
        "refused": sum(bool(c.get("refused")) for c in cases),
        "errors": sum(c["expect"]["type"] == "error" for c in cases),
        "correct": len(cases) - len(failures),
        "failures": failures,
        "median_ms": statistics.median(timings),
        "max_ms": max(timings),
    }


def main(argv: list[str]) -> int:
    rows = {name: score(file, parser) for name, (file, parser) in FORMATS.items()}
    header = (f"{'format':<12} {'cases':>6} {'hand':>5} {'derived':>7} {'expect err':>10} "
              f"{'refused':>7} {'correct':>7} {'accuracy':>9} {'median ms':>9} {'max ms':>7}")
    print(header)
    print("-" * len(header))
    for name, r in rows.items():
        print(f"{name:<12} {r['cases']:>6} {r['cases'] - r['derived']:>5} {r['derived']:>7} "
              f"{r['errors']:>10} {r['refused']:>7} {r['correct']:>7} "
              f"{r['correct'] / r['cases']:>9.1%} {r['median_ms']:>9.3f} {r['max_ms']:>7.2f}")
    total = sum(r["cases"] for r in rows.values())
    correct = sum(r["correct"] for r in rows.values())
    print("-" * len(header))
    print(f"{'overall':<12} {total:>6} {'':>5} {'':>7} {'':>10} {'':>7} {correct:>7} "
          f"{correct / total:>9.1%}")
    if "--failures" in argv:
        for name, r in rows.items():
            for case_id, expect, got in r["failures"]:
                print(f"\n[{name}] {case_id}\n  expected {expect}\n  got      {got}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

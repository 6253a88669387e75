"""Parser speed on adversarial and long replies: milliseconds per 10 KB (budget: 50).

    python bench/parser_speed.py

The tests only guard against runaway parsing (seconds); this prints the real figures, best of
three per input and parser, and flags any input over the 50 ms / 10 KB budget.
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentcli.agents.conversational import ConversationalOutputParser  # noqa: E402
from agentcli.agents.parsers import JsonBlobOutputParser, ReActOutputParser  # noqa: E402
from agentcli.agents.self_ask import SelfAskOutputParser  # noqa: E402
from agentcli.errors import OutputParserError  # noqa: E402

BUDGET_MS_PER_10KB = 50.0
PARSERS = {"react": ReActOutputParser(), "json-blob": JsonBlobOutputParser(),
           "conversational": ConversationalOutputParser(),
           "self-ask": SelfAskOutputParser("search")}


def adversarial() -> list[str]:
    """The inputs of tests/data/adversarial_outputs.jsonl."""
    out = []
    path = ROOT / "tests" / "data" / "adversarial_outputs.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        tail = e.get("suffix_unit", "") * e["times"] + e.get("suffix", "")
        out.append(e.get("prefix", "") + e["unit"] * e["times"] + tail)
    return out


def long_texts(n: int = 20, seed: int = 1) -> list[str]:
    """Long random replies mixing parser keywords and JSON punctuation."""
    rng = random.Random(seed)
    parts = ["Action:", "Action Input:", "Final Answer:", "```", "{", "}", "[", "]", '"',
             "json", "\n", " ", "Thought:", "x", "Calculator", ":", ","]
    return ["".join(rng.choice(parts) for _ in range(rng.randint(200, 3000))) for _ in range(n)]


def best_ms(parser: object, text: str) -> float:
    """Best of three parse times, in milliseconds."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        with contextlib.suppress(OutputParserError):
            parser.parse(text)  # type: ignore[attr-defined]
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    """Print ms per 10 KB for every input and parser; exit 1 if any is over budget."""
    over = 0
    for label, texts in (("adversarial", adversarial()), ("long random", long_texts())):
        print(f"{label}:")
        for text in texts:
            scale = max(1.0, len(text) / 10_000)
            cells = []
            for name, parser in PARSERS.items():
                per_10kb = best_ms(parser, text) / scale
                over += per_10kb > BUDGET_MS_PER_10KB
                cells.append(f"{name} {per_10kb:6.2f}")
            print(f"  {text[:20]!r:26} {len(text):>7,} chars  " + "  ".join(cells))
    print(f"budget {BUDGET_MS_PER_10KB:g} ms / 10 KB; over budget: {over}")
    raise SystemExit(1 if over else 0)


if __name__ == "__main__":
    main()

"""Rebuild the derived cases of the parser corpus from the hand-written ones.

Real replies vary in ways that do not change what a human reads: a reasoning block before
the answer, a chatty preamble, a leaked end-of-turn token, Windows line endings. Each
transform below is applied to hand-written action/finish cases; the expected parse is the
original's. Derived cases have ids ``derived-<transform>-<id>`` and are rebuilt (never
duplicated) on each run:

    python bench/derive_corpus.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
FILES = ("react_outputs.jsonl", "json_blob_outputs.jsonl")

TRANSFORMS: dict[str, tuple[str, Callable[[str], str]]] = {
    "think": ("a reasoning model's <think> block before the reply",
              lambda t: "<think>\nThe user asked a question. I must follow the format exactly."
                        "\n</think>\n\n" + t),
    "preamble": ("a chatty preamble before the reply",
                 lambda t: "Okay, here is my next step.\n\n" + t),
    "im_end": ("a leaked ChatML end token after the reply", lambda t: t.rstrip() + "<|im_end|>"),
    "crlf": ("Windows line endings", lambda t: t.replace("\n", "\r\n")),
}
_SKIP = ("<think", "<|", "</s>", "\r", "Question:", "\ufeff")


def _eligible(case: dict[str, object], name: str) -> bool:
    text = str(case["text"])
    expect = case["expect"]
    assert isinstance(expect, dict)
    if expect["type"] == "error" or not text.strip() or any(s in text for s in _SKIP):
        return False
    if name == "preamble" and not text.lstrip().startswith(("Thought", "**Thought", "Action")):
        return False  # a preamble before bare prose would become part of the answer
    if name == "crlf":  # multi-line values would carry \r; keep to single-line ones
        values = [v for v in expect.values() if isinstance(v, str)]
        return all("\n" not in v for v in values)
    return True


def rebuild(path: Path, per_transform: int = 16) -> int:
    """Rewrite ``path`` with its hand-written cases followed by freshly derived ones."""
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    own = [c for c in cases if not c["id"].startswith("derived-")]
    derived = []
    for name, (note, fn) in TRANSFORMS.items():
        picked = [c for c in own if _eligible(c, name)][:per_transform]
        for case in picked:
            derived.append({"id": f"derived-{name}-{case['id']}", "text": fn(case["text"]),
                            "expect": case["expect"], "note": f"{note} (from {case['id']})"})
    lines = [json.dumps(c, ensure_ascii=False) for c in [*own, *derived]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(derived)


if __name__ == "__main__":
    for file in FILES:
        print(f"{file}: {rebuild(DATA / file)} derived cases")

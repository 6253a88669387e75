"""agentcli vs LangChain, side by side against the same local mock server, interleaved.

Run by hand (not in CI): ``.venv/bin/python bench/run.py`` after creating the LangChain venv
(see bench/README.md). Prints one table with ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentcli.testing.mock_server import MockOpenAIServer

HERE = Path(__file__).resolve().parent
LC_PY = os.environ.get("LC_PYTHON", "/tmp/agentcli-bench-lc/bin/python")
OURS_PY = sys.executable
AGENT = [OURS_PY, "-m", "agentcli"]
LC_IMPORT = ("import langchain_classic.agents; "
             "from langchain_classic.agents import AgentExecutor, initialize_agent, load_tools; "
             "import langchain_openai")
SEED_ACTION = (
    "Thought: I need to calculate 25% of 300. I can use the Calculator tool for this.\n"
    "Action:\n```\n{\n  \"action\": \"Calculator\",\n  \"action_input\": \"300 * 0.25\"\n}\n```\n"
)
SEED_FINAL = "The calculation shows that 25% of 300 is 75. \n\nFinal Answer: 75"
MATH_REPLY = '```text\n300 * 0.25\n```\n...numexpr.evaluate("300 * 0.25")...\n'
BATCH_DELAY = 0.05
state: dict[str, Any] = {"mode": "seed"}


def responder(body: dict[str, Any]) -> dict[str, Any]:
    """Plays the seed example for either framework (and LangChain's llm-math prompt)."""
    if state["mode"] == "batch":
        return {"text": "Final Answer: ok", "delay": BATCH_DELAY}
    contents = [str(m.get("content") or "") for m in body.get("messages", [])]
    if any("Translate a math problem" in c for c in contents):
        return {"text": MATH_REPLY}
    if "Observation: Answer: 75" in contents[-1]:
        return {"text": SEED_FINAL}
    return {"text": SEED_ACTION}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB) and exit code of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return wall, usage.ru_maxrss, proc.returncode


def side(python: str, script: str, mode: str, base_url: str, n: int, env: dict[str, str]
         ) -> dict[str, Any]:
    """Run one in-process benchmark in its own interpreter; return its JSON result."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = fh.name
    timed([python, str(HERE / script), mode, base_url, out, str(n)], env)
    return dict(json.loads(Path(out).read_text()))


def traffic(server: MockOpenAIServer, since: int) -> tuple[int, int]:
    """Requests and prompt characters the server saw since request number ``since``."""
    new = server.requests[since:]
    chars = sum(len(str(m.get("content") or "")) for r in new for m in r.body.get("messages", []))
    return len(new), chars


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=7, help="cold-start samples per command")
    parser.add_argument("--steps", type=int, default=30, help="agent steps per overhead run")
    parser.add_argument("--batch", type=int, default=320, help="questions in the batch test")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    if not Path(LC_PY).exists():
        raise SystemExit(f"no LangChain venv at {LC_PY}; see bench/README.md")
    server = MockOpenAIServer().start()
    server.set_responder(responder)
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
           "NO_COLOR": "1", "OLLAMA_BASE_URL": "http://127.0.0.1:9/v1"}
    env.pop("AGENT_CONFIG", None)
    r: dict[str, Any] = {}

    # (a) cold start, interleaved
    help_t, list_t, lc_t = [], [], []
    for _ in range(args.repeat):
        help_t.append(timed([*AGENT, "--help"], env)[0])
        lc_t.append(timed([LC_PY, "-W", "ignore", "-c", LC_IMPORT], env)[0])
        list_t.append(timed([*AGENT, "tools", "list"], env)[0])
    r["help_ms"] = statistics.median(help_t) * 1000
    r["tools_list_ms"] = statistics.median(list_t) * 1000
    r["lc_import_ms"] = statistics.median(lc_t) * 1000

    # (b) the seed example end to end, interleaved
    ours, lc = [], []
    for _ in range(max(3, args.repeat // 2)):
        before = len(server.requests)
        wall, rss, _ = timed([*AGENT, "run", "What is 25% of 300?", "-m", "openai/mock-model",
                              "-q"], env)
        ours.append((wall, rss, *traffic(server, before)))
        before = len(server.requests)
        with tempfile.NamedTemporaryFile(suffix=".json") as fh:
            wall, rss, _ = timed([LC_PY, str(HERE / "lc_side.py"), "seed", server.base_url,
                                  fh.name], env)
            assert json.loads(Path(fh.name).read_text())["answer"].strip() == "75"
        lc.append((wall, rss, *traffic(server, before)))
    for name, runs in (("ours", ours), ("lc", lc)):
        r[f"{name}_seed_wall_ms"] = statistics.median(x[0] for x in runs) * 1000
        r[f"{name}_seed_rss_mb"] = statistics.median(x[1] for x in runs) / 1024
        r[f"{name}_seed_requests"] = runs[0][2]
        r[f"{name}_seed_prompt_chars"] = runs[0][3]

    # (c) framework overhead per step, zero-latency fake models, interleaved
    o_steps, l_steps = [], []
    for _ in range(3):
        o_steps.append(side(OURS_PY, "ours_side.py", "overhead", "-", args.steps, env)
                       ["per_step_s"])
        l_steps.append(side(LC_PY, "lc_side.py", "overhead", "-", args.steps, env)
                       ["per_step_s"])
    r["ours_step_us"] = min(o_steps) * 1e6
    r["lc_step_us"] = min(l_steps) * 1e6

    # (d) batch throughput at concurrency 16 with 50 ms per model call, interleaved
    state["mode"] = "batch"
    ideal = args.batch * BATCH_DELAY / 16
    o_wall, l_wall = [], []
    for _ in range(2):
        res = side(OURS_PY, "ours_side.py", "batch", server.base_url, args.batch, env)
        assert res["ok"] == args.batch, res
        o_wall.append(res["wall_s"])
        res = side(LC_PY, "lc_side.py", "batch", server.base_url, args.batch, env)
        assert res["ok"] == args.batch, res
        l_wall.append(res["wall_s"])
    r["ideal_batch_s"] = ideal
    r["ours_batch_s"] = min(o_wall)
    r["lc_batch_s"] = min(l_wall)
    server.stop()
    print_table(r, args)
    if args.json:
        args.json.write_text(json.dumps(r, indent=2))


def print_table(r: dict[str, Any], args: argparse.Namespace) -> None:
    """One table: metric, agentcli, LangChain, ratio, target."""
    def ratio(ours: float, lc: float) -> str:
        return f"{lc / ours:.1f}x" if ours else "-"

    ideal_pct = r["ideal_batch_s"] / r["ours_batch_s"] * 100
    lc_pct = r["ideal_batch_s"] / r["lc_batch_s"] * 100
    rows = [
        ("cold start: agent --help / LC import (ms)", f"{r['help_ms']:.0f}",
         f"{r['lc_import_ms']:.0f}", ratio(r["help_ms"], r["lc_import_ms"]), "<= 150 ms"),
        ("cold start: agent tools list (ms)", f"{r['tools_list_ms']:.0f}",
         f"{r['lc_import_ms']:.0f}", ratio(r["tools_list_ms"], r["lc_import_ms"]), "<= 150 ms"),
        ("seed example: wall (ms)", f"{r['ours_seed_wall_ms']:.0f}",
         f"{r['lc_seed_wall_ms']:.0f}", ratio(r["ours_seed_wall_ms"], r["lc_seed_wall_ms"]), ""),
        ("seed example: peak RSS (MB)", f"{r['ours_seed_rss_mb']:.1f}",
         f"{r['lc_seed_rss_mb']:.1f}", ratio(r["ours_seed_rss_mb"], r["lc_seed_rss_mb"]),
         "<= 1/2 of LC"),
        ("seed example: model requests", str(r["ours_seed_requests"]),
         str(r["lc_seed_requests"]), ratio(r["ours_seed_requests"], r["lc_seed_requests"]), ""),
        ("seed example: prompt chars sent", str(r["ours_seed_prompt_chars"]),
         str(r["lc_seed_prompt_chars"]),
         ratio(r["ours_seed_prompt_chars"], r["lc_seed_prompt_chars"]), ""),
        (f"overhead per step, fake model (us, {args.steps} steps)", f"{r['ours_step_us']:.0f}",
         f"{r['lc_step_us']:.0f}", ratio(r["ours_step_us"], r["lc_step_us"]),
         "<= 1/10 of LC"),
        (f"batch {args.batch} x 50 ms @16 (s; ideal {r['ideal_batch_s']:.2f})",
         f"{r['ours_batch_s']:.2f}", f"{r['lc_batch_s']:.2f}",
         ratio(r["ours_batch_s"], r["lc_batch_s"]), ">= 90% of ideal"),
        ("batch: % of ideal bound", f"{ideal_pct:.0f}%", f"{lc_pct:.0f}%", "", ""),
    ]
    head = ("metric", "agentcli", "LangChain", "LC/agentcli", "target")
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(5)]
    line = "  ".join("{:<" + str(w) + "}" for w in widths)
    print(line.format(*head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line.format(*row))


if __name__ == "__main__":
    main()

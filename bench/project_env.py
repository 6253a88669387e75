"""What a big project ``.env`` costs `agent run`, run by hand (issue 38).

    .venv/bin/python bench/project_env.py [--pairs 5] [--lines 30000]

Child processes of the real command (stdout and stderr piped), the scripted fake model (no
server), in interleaved rounds (the order rotates each round), each in a repository of its
own:

- ``none``: no ``.env``;
- ``big``: a ``.env`` of ``--lines`` short variables (``V0=0`` ...), trusted with
  ``agent trust`` (before issue 38 every one was parsed and put into the environment);
- ``cap``: a ``.env`` of ``MAX_ENV_LINES`` such lines, trusted: the most a project may load.

Prints, per arm, the median CPU time (user + system of the child) and the bytes written to
stderr. Target: ``big`` within noise of ``none`` and one line of stderr. Nothing is asserted.

Last run (issue 38, 2 shared cores, load 12; 30,000 lines = 286 KB): none 0.40 s, big 0.44 s
and 166 B of stderr (the file refused in one line), cap 0.49 s. Before the cap, by hand on
the same file: 2.9-3.1 s trusted (parsing, then 30,000 putenv()), 0.86-0.96 s and 229,006 B
of warnings untrusted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agentcli.project_trust import MAX_ENV_LINES  # noqa: E402


def _agent(cwd: Path, env: dict[str, str], *args: str) -> tuple[float, int]:
    """(CPU seconds of the child, bytes of stderr) for one `agent` command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "agentcli", *args], cwd=cwd, env=env,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, len(proc.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--lines", type=int, default=30_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_", "OTEL_"))}
        env.update(HOME=str(base), XDG_CONFIG_HOME=str(base / "config"),
                   XDG_DATA_HOME=str(base / "data"), PYTHONPATH=str(ROOT))
        replies = base / "replies.json"
        replies.write_text(json.dumps(["Final Answer: 42"]))
        arms: dict[str, Path] = {}
        for name, lines in (("none", 0), ("big", args.lines), ("cap", MAX_ENV_LINES)):
            repo = base / name
            (repo / ".git").mkdir(parents=True)
            if lines:
                (repo / ".env").write_text("".join(f"V{i}={i % 100}\n" for i in range(lines)))
                _agent(repo, env, "trust")
            arms[name] = repo
        results: dict[str, list[tuple[float, int]]] = {name: [] for name in arms}
        order = list(arms)
        for round_ in range(args.pairs):
            for name in order[round_ % len(order):] + order[:round_ % len(order)]:
                results[name].append(_agent(arms[name], env, "run", "-m", f"fake:{replies}",
                                            "--no-log", "-q", "q"))
        for name, runs in results.items():
            cpu = statistics.median(c for c, _ in runs)
            print(f"{name:5} cpu {cpu:.2f} s (median of {len(runs)})  stderr {runs[-1][1]:,} B")


if __name__ == "__main__":
    main()

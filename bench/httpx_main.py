"""Is ``agentcli/models/__init__.py``'s ``sys.modules["httpx._main"] = None`` worth it?

httpx's ``__init__`` imports its own command-line client (``httpx._main``: click, rich,
pygments) when they are installed, as they are for our CLI. ``agentcli.models`` puts a None
entry in ``sys.modules`` first, so that import fails and httpx defines a stub instead. This
row times child processes both ways, interleaved (the side that goes first alternating):

* A (shipped): the entry left in place;
* B (without): the entry removed right after ``import agentcli.models``, before httpx loads.

Rows: ``import agentcli.models; import httpx`` and the seed ``agent run`` (stdout piped,
against ``bench/server.py``), each through the same ``python -c`` wrapper so only the entry
differs; wall (median, range), peak RSS, and B / A per round. ``agent --help`` imports no
httpx, so the entry cannot change it.
``.venv/bin/python bench/httpx_main.py [--rounds 11]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import PY, SEED, Server, interleave, timed_child  # noqa: E402

DROP = "sys.modules.pop('httpx._main', None)\n"
IMPORT = "import sys\nimport agentcli.models\n{drop}import httpx\n"
SEED_RUN = ("import sys\nimport agentcli.models\n{drop}from agentcli.__main__ import main\n"
            f"sys.argv = ['agent', *{SEED!r}]\nmain()\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "agentcli")], check=True)
    server = Server()
    server.mode("seed")
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
           "NO_COLOR": "1", "XDG_DATA_HOME": tempfile.mkdtemp()}
    for key in ("AGENT_CONFIG", "COLUMNS", "PYTHONDONTWRITEBYTECODE"):
        env.pop(key, None)
    print(f"# {args.rounds} interleaved rounds, load {os.getloadavg()[0]:.2f}")
    try:
        for label, code in (("import agentcli.models; import httpx", IMPORT),
                            ("seed `agent run` (piped)", SEED_RUN)):
            rss: list[list[float]] = [[], []]

            def child(k: int, code: str = code, rss: list[list[float]] = rss) -> float:
                wall, peak = timed_child([PY, "-c", code.format(drop=DROP if k else "")], env,
                                         cwd=HERE.parent)
                rss[k].append(peak)
                return wall * 1e3

            a, b = interleave(args.rounds, [lambda: child(0), lambda: child(1)])
            r = sorted(y / x for x, y in zip(a, b, strict=True))
            print(f"{label}: A shipped {statistics.median(a):.1f} ms ({min(a):.1f}-{max(a):.1f}),"
                  f" B without {statistics.median(b):.1f} ms ({min(b):.1f}-{max(b):.1f}); "
                  f"B - A {statistics.median(b) - statistics.median(a):+.1f} ms; B / A median "
                  f"{statistics.median(r):.2f} ({r[0]:.2f}-{r[-1]:.2f}); peak RSS A "
                  f"{statistics.median(rss[0]):.1f} MiB, B {statistics.median(rss[1]):.1f} MiB;"
                  f" load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()

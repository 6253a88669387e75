"""Is ``redact.py``'s read of ``os.environ._data`` worth its private access?

``secret_values()`` runs at every answer drawn and every store write. Reading the process
environment through ``os.environ`` decodes every name; ``redact.py`` instead compares a copy
of ``os.environ``'s raw mapping (``_data``, a CPython detail) with the one it last read, and
reuses the secrets found then. This row times one call both ways, in-process:

* A: ``secret_values(os.environ)``: the public path (every name decoded, each call);
* B: ``secret_values()``: the raw-mapping cache as shipped.

Interleaved rounds, median per call of each, and the ratio A / B.
``.venv/bin/python bench/redact_env.py [--rounds 7] [--calls 2000]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from agentcli.redact import secret_values


def _per_call(env: os._Environ[str] | None, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        secret_values(env)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    public: list[float] = []
    cached: list[float] = []
    secret_values()  # the first read fills the cache
    for i in range(args.rounds):
        order = [(public, os.environ), (cached, None)]
        for into, env in order if i % 2 == 0 else order[::-1]:
            into.append(_per_call(env, args.calls))
    a, b = statistics.median(public), statistics.median(cached)
    print(f"environment: {len(os.environ)} variables")
    print(f"secret_values() per call   A public os.environ {a:6.1f} us   "
          f"B raw-mapping cache {b:6.1f} us   A / B {a / b:5.1f}")


if __name__ == "__main__":
    main()

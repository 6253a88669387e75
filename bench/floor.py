"""The floor for the batch rows: bare asyncio + httpx, one client per worker, no framework.

Usage: python floor.py - BASE_URL OUT.json N CONCURRENCY   (the same arguments as the sides)
Sends the same kind of request (a system and a user message) ``N`` times with ``CONCURRENCY``
workers, each with its own ``httpx.AsyncClient``; writes the wall time.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import httpx


async def worker(client: httpx.AsyncClient, base_url: str, queue: list[int]) -> int:
    ok = 0
    async with client:
        while queue:
            i = queue.pop()
            body = {"model": "mock-model", "stop": ["\nObservation:"], "messages": [
                {"role": "system", "content": "Answer the question. Final Answer: ..."},
                {"role": "user", "content": f"question {i}"}]}
            resp = await client.post(f"{base_url}/chat/completions", json=body,
                                     headers={"Authorization": "Bearer sk-bench"})
            ok += "Final Answer" in resp.json()["choices"][0]["message"]["content"]
    return ok


async def main(base_url: str, n: int, concurrency: int) -> dict[str, float]:
    queue = list(range(n))
    # Clients are made before the clock starts, sharing one SSL context: a floor, not a strawman.
    tls = httpx.create_ssl_context()
    clients = [httpx.AsyncClient(timeout=60, verify=tls) for _ in range(concurrency)]
    t0 = time.perf_counter()
    oks = await asyncio.gather(*(worker(c, base_url, queue) for c in clients))
    return {"wall_s": time.perf_counter() - t0, "ok": sum(oks)}


if __name__ == "__main__":
    base, out, n, c = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    Path(out).write_text(json.dumps(asyncio.run(main(base, n, c))))

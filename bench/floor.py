"""The floor: bare asyncio + httpx, no framework.

    python floor.py - BASE_URL OUT.json N CONCURRENCY   batch rows (the sides' arguments)
    python floor.py replay BASE_URL OUT.json BODIES.json  per-step rows

Batch: sends the same kind of request (a system and a user message) ``N`` times with
``CONCURRENCY`` workers, each with its own ``httpx.AsyncClient``; writes the wall time.
Replay: sends the very request bodies an agentcli run sent (recorded by the bench server),
one after the other, reading each JSON reply: the work no client can avoid.
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
    cpu0, t0 = time.process_time(), time.perf_counter()
    oks = await asyncio.gather(*(worker(c, base_url, queue) for c in clients))
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0,
            "ok": sum(oks)}


async def replay(base_url: str, bodies: list[str]) -> dict[str, float]:
    tls = httpx.create_ssl_context()
    async with httpx.AsyncClient(timeout=60, verify=tls) as client:
        cpu0, t0 = time.process_time(), time.perf_counter()
        for body in bodies:
            headers = {"Authorization": "Bearer sk-bench", "Content-Type": "application/json"}
            url = f"{base_url}/chat/completions"
            if '"stream": true' in body or '"stream":true' in body:  # read the SSE events
                async with client.stream("POST", url, content=body.encode(),
                                         headers=headers) as resp:
                    async for line in resp.aiter_lines():
                        if line.startswith("data:") and line[5:].strip() != "[DONE]":
                            json.loads(line[5:])
            else:
                resp = await client.post(url, content=body.encode(), headers=headers)
                resp.json()["choices"][0]["message"]["content"]
        return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - cpu0}


if __name__ == "__main__":
    if sys.argv[1] == "replay":
        base, out, path = sys.argv[2], sys.argv[3], sys.argv[4]
        result = asyncio.run(replay(base, json.loads(Path(path).read_text())))
    else:
        base, out, n, c = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        result = asyncio.run(main(base, n, c))
    Path(out).write_text(json.dumps(result))

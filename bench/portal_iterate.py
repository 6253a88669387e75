"""The portal's cost per item: a sync caller iterating an async generator (``_sync.iterate``).

    python bench/portal_iterate.py [N]     (default 20000 items; prints one row per way)

CPU is the process's (both threads: the caller's and the portal loop's) per item, the
median of 5 rounds; ``asyncio.run`` consuming the same generator in one thread is the floor
(no hop at all). ``executor.stream`` iterates its run's events this way, so this is the
portal's share of every event of a sync run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator

from agentcli._sync import iterate, run_sync


async def items(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


async def sleepy(n: int) -> AsyncIterator[int]:
    for i in range(n):
        await asyncio.sleep(0)  # the generator suspends before each item
        yield i


def per_item(fn: object, n: int) -> float:
    """Median CPU microseconds per item over 5 rounds."""
    rounds = []
    for _ in range(5):
        cpu = time.process_time()
        fn()  # type: ignore[operator]
        rounds.append((time.process_time() - cpu) / n * 1e6)
    return statistics.median(rounds)


def main(n: int) -> None:
    run_sync(asyncio.sleep(0))  # the portal is started before the clock

    async def floor() -> None:
        async for _ in items(n):
            pass

    rows = {
        "asyncio.run, same thread (floor)": lambda: asyncio.run(floor()),
        "iterate(items)": lambda: sum(1 for _ in iterate(items(n))),
        "iterate(items awaiting before each)": lambda: sum(1 for _ in iterate(sleepy(n))),
        "run_sync per item (one hop each)": lambda: [run_sync(asyncio.sleep(0))
                                                     for _ in range(n)],
    }
    print(f"{'way':40} {'CPU us/item':>12}   (N={n})")
    for name, fn in rows.items():
        print(f"{name:40} {per_item(fn, n):12.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)

"""``python -m tests.support.mock_server``: run the mock server in the foreground."""

from __future__ import annotations

import argparse
import json
import time

from tests.support.mock_replies import Reply
from tests.support.mock_server import MockOpenAIServer


def main(argv: list[str] | None = None) -> None:
    """Run a mock server in the foreground; print its base URL."""
    parser = argparse.ArgumentParser(description="A local OpenAI-compatible mock server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: a list of reply dicts, or "
                        '{"replies": [...], "faults": [...]}')
    parser.add_argument("--dashscope-style", action="store_true")
    parser.add_argument("--honour-stop", action="store_true")
    args = parser.parse_args(argv)
    server = MockOpenAIServer(port=args.port, dashscope_style=args.dashscope_style,
                              honour_stop=args.honour_stop)
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            script = json.load(fh)
        if isinstance(script, list):
            script = {"replies": script}
        for fault in script.get("faults", []):
            server.add_fault(**fault)
        for reply in script.get("replies", []):
            server._replies.append(Reply.from_spec(reply))
    server.start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()

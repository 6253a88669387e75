"""Run the `agent` CLI with the test-only memory agent registered (for pty-driven tests)."""

import sys

import memory_agent

from agentcli.cli.app import main

if __name__ == "__main__":
    memory_agent.register()
    sys.argv = ["agent", *sys.argv[1:]]
    main()

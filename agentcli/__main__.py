"""``python -m agentcli``."""

from agentcli.cli.app import main

main()

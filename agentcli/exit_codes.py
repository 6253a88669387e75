"""The process exit codes of the ``agent`` command, defined once."""

from __future__ import annotations

OK = 0  # answered
INTERNAL = 1  # a bug in agentcli
TOOL_FAILED = 1  # `agent tools call`: the call was denied or the tool refused its input
USAGE = 2  # bad flag, config, input file or environment value
LIMIT = 3  # stopped by a limit (iterations, time, budget)
PROVIDER = 4  # the model server failed or answered nonsense
INTERRUPTED = 130  # Ctrl-C
# What Ctrl-C (or a SIGTERM) prints, wherever it lands: in a model wait, a tool, reading stdin
INTERRUPTED_LINE = "Interrupted: cancelled"

HELP = (
    "Exit codes: 0 answered; 1 internal error; 2 usage or config error; "
    "3 stopped by a limit (iterations, time, budget); 4 model/provider error; 130 interrupted."
)

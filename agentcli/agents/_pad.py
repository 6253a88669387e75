"""The scratchpad, rendered incrementally: a run's step N appends one step's text, not N.

An executor calls :func:`agentcli.agents.base.scratchpad` once per step with the steps so
far, a list that only grows. Rendering it whole each time costs O(steps) per step (O(n²) per
run); here only the steps added since the last call are rendered and appended
(:class:`agentcli.agents._prefix.PrefixCache`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentcli.agents._prefix import PrefixCache
from agentcli.schema import AgentStep

_LEADING_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.I)


def render_steps(steps: Sequence[AgentStep], *, first_index: int = 0,
                 starts_after_thought: bool = False) -> str:
    """Steps as prior work: each log, its observation, then ``Thought:`` (no cache)."""
    parts = []
    for i, step in enumerate(steps, first_index):
        log = step.action.log.strip()
        if i > 0 or starts_after_thought:
            if log[:7].lower() == "thought":  # cheap test first: this runs for every step
                log = _LEADING_THOUGHT.sub("", log)
            log = " " + log
        parts.append(f"{log}\nObservation: {step.observation}\nThought:")
    return "".join(parts)


_SCRATCHPADS: PrefixCache[str] = PrefixCache(str.__add__)


def scratchpad_text(steps: Sequence[AgentStep], starts_after_thought: bool) -> str:
    """The full scratchpad for ``steps``, reusing the text rendered for its longest known prefix."""
    if not steps:
        return ""
    return _SCRATCHPADS.get(steps, starts_after_thought, lambda rest, first: render_steps(
        rest, first_index=first, starts_after_thought=starts_after_thought))

"""The incremental scratchpad gives exactly what a full render gives, whatever the list does."""

from __future__ import annotations

from agentcli.agents._prefix import render_steps
from agentcli.agents.base import scratchpad
from agentcli.schema import AgentAction, AgentStep


def step(i: int, *, thought: bool = True) -> AgentStep:
    log = (f"Thought: step {i}\n" if thought else f"step {i}\n") + f'{{"action": "echo {i}"}}'
    return AgentStep(AgentAction("echo", str(i), log), f"seen {i}")


def full(steps: list[AgentStep], after: bool = False) -> str:
    return render_steps(steps, starts_after_thought=after)


def test_growing_run_matches_a_full_render_at_every_step() -> None:
    for after in (False, True):
        steps: list[AgentStep] = []
        for i in range(60):
            steps.append(step(i, thought=i % 3 != 0))
            assert scratchpad(steps, starts_after_thought=after) == full(steps, after)


def test_full_render_keeps_the_documented_format() -> None:
    text = full([step(0), step(1)])
    assert text == ('Thought: step 0\n{"action": "echo 0"}\nObservation: seen 0\nThought:'
                    ' step 1\n{"action": "echo 1"}\nObservation: seen 1\nThought:')


def test_trimmed_edited_and_copied_lists_are_rendered_correctly() -> None:
    steps = [step(i) for i in range(10)]
    assert scratchpad(steps) == full(steps)
    assert scratchpad(steps[3:]) == full(steps[3:])  # trim_intermediate_steps keeps a tail
    assert scratchpad(steps[:4]) == full(steps[:4])  # shorter than what was cached
    edited = list(steps)
    edited[5] = step(99)  # same first step, a different middle
    assert scratchpad(edited) == full(edited)
    assert scratchpad(tuple(steps)) == full(steps)  # any sequence
    assert scratchpad(steps, starts_after_thought=True) == full(steps, True)
    assert scratchpad([]) == ""


def test_equal_but_distinct_steps_render_the_same() -> None:
    steps = [step(i) for i in range(5)]
    scratchpad(steps)
    copies = [AgentStep(s.action, s.observation) for s in steps] + [step(5)]
    assert scratchpad(copies) == full(copies)


def test_many_interleaved_runs_stay_correct() -> None:
    runs: list[list[AgentStep]] = [[] for _ in range(300)]  # more runs than the cache keeps
    for i in range(4):
        for n, run in enumerate(runs):
            run.append(step(n * 10 + i))
            assert scratchpad(run) == full(run)

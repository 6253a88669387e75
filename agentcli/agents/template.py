"""``PromptTemplate``: a prompt with ``{name}`` variables (what ``create_prompt`` returns and
``create_react_agent`` takes)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field

from agentcli.agents.prompts import render, variables
from agentcli.records import record


@record(frozen=False)
class PromptTemplate:
    """A prompt with ``{name}`` variables, as ``create_react_agent`` takes it."""

    template: str
    input_variables: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.input_variables:
            self.input_variables = sorted(variables(self.template))

    @classmethod
    def from_template(cls, template: str) -> PromptTemplate:
        """A template whose variables are the ``{name}`` placeholders in it."""
        return cls(template)

    def format(self, **values: object) -> str:
        """The text with each variable filled; a missing one is a KeyError naming it."""
        return fill(self.template, self.input_variables, values)

    def partial(self, **values: object) -> PromptTemplate:
        """This template with some variables filled now (LangChain's ``partial``)."""
        text = render(self.template, **{k: str(v) for k, v in values.items()})
        return PromptTemplate(text, [v for v in self.input_variables if v not in values]
                              or sorted(variables(text)))


def fill(template: str, names: Iterable[str], values: Mapping[str, object]) -> str:
    """``template`` with each value filled; a KeyError names any of ``names`` not given."""
    missing = sorted(set(names) - set(values))
    if missing:
        raise KeyError(f"missing prompt variable(s) {missing}")
    return render(template, **{k: str(v) for k, v in values.items()})

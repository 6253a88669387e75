"""``--state``, ``--state-file`` and ``--schema``: run state fields and a structured answer."""

from __future__ import annotations

import json
from dataclasses import field
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.files import read_small_text
from agentcli.records import record
from agentcli.state import StateSchema


def _json_file(path: Path, flag: str) -> object:
    text = read_small_text(path, flag, "give a JSON file of at most 1 MiB")
    try:
        return json.loads(text)
    except RecursionError:
        raise ConfigError(f"{flag} {path} is nested too deeply to read; flatten it") from None
    except ValueError as err:
        raise ConfigError(f"{flag} {path} is not valid JSON ({err}); fix the file") from None


@record
class RunInputs:
    """State fields and an answer schema given on the command line."""

    pairs: tuple[str, ...] = ()
    from_file: dict[str, object] = field(default_factory=dict)
    schema: dict[str, object] | None = None

    @classmethod
    def from_flags(
        cls, pairs: list[str], state_file: Path | None, schema: Path | None
    ) -> RunInputs:
        """Read the files now, so a bad file fails before any model is contacted."""
        loaded: dict[str, object] = {}
        if state_file is not None:
            data = _json_file(state_file, "--state-file")
            if not isinstance(data, dict):
                raise ConfigError(f"--state-file {state_file} must hold a JSON object of fields")
            loaded = data
        answer_schema = None
        if schema is not None:
            found = _json_file(schema, "--schema")
            if not isinstance(found, dict):
                raise ConfigError(f"--schema {schema} must hold a JSON Schema object")
            from agentcli.structured import check_schema

            check_schema(found, f"--schema {schema}")
            answer_schema = found
        return cls(tuple(pairs), loaded, answer_schema)

    def values(self, schema: StateSchema) -> dict[str, object]:
        """The fields, checked against the run's state schema (flags win over the file)."""
        return {**self.from_file, **schema.parse_pairs(self.pairs)}

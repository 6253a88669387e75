"""Generate ``configs/default.yaml`` and ``.env.example`` from the settings table.

``python -m agentcli.config_docs --write`` rewrites both files; ``--check`` exits 1 when a
committed file differs from what the table says (a test runs the same comparison).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentcli.config import FIELDS, OTHER_VARIABLES, Settings
from agentcli.files import write_atomic
from agentcli.models.presets import PRESETS

_PRECEDENCE = (
    "# Precedence: command-line flag > environment (.env) > --config file > user config\n"
    "# ($XDG_CONFIG_HOME/agentcli/config.yaml) > built-in default.\n"
)
_GENERATED = "# Generated from the settings table in agentcli/config.py by\n" \
    "# `python -m agentcli.config_docs --write`; edit the table, not this file.\n"


def _yaml_value(value: object) -> str:
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False).strip()
    return text.removesuffix("...").strip()


def _comment(text: str) -> str:
    import textwrap

    return "".join(f"# {line}\n" for line in textwrap.wrap(text, 90))


def render_default_yaml() -> str:
    """The text of ``configs/default.yaml``: every key with its default and help line."""
    out = ["# agentcli settings: every key with its built-in default. Copy this file, change\n"
           "# what you need, and point --config or $AGENT_CONFIG at it.\n", _PRECEDENCE,
           _GENERATED]
    defaults = Settings()
    for name, spec in FIELDS.items():
        env = f" (env {spec.env})" if spec.env else ""
        value = _yaml_value(getattr(defaults, name))
        out.append("\n" + _comment(spec.help + env) + f"{name}: {value}\n")
    return "".join(out)


def _env_line(name: str, help_text: str, *, commented: bool = False) -> str:
    return _comment(help_text) + ("# " if commented else "") + f"{name}=\n"


def render_env_example() -> str:
    """The text of ``.env.example``: every environment variable agentcli reads."""
    out = ["# Every environment variable agentcli reads. Copy to .env and fill in what you use.\n",
           "# A project's .env is project content: some variables load only once you trust it\n"
           "# (`agent trust`), some never (the gates, tool modules, AGENT_CONFIG): see\n"
           "# docs/security.md, \"Project files\".\n",
           _PRECEDENCE, _GENERATED, "\n# --- settings (see configs/default.yaml) ---\n"]
    for name, (_, help_text) in OTHER_VARIABLES.items():
        if not name.startswith("XDG_"):
            out.append(_env_line(name, help_text))
    for key, spec in FIELDS.items():
        if spec.env:
            out.append(_env_line(spec.env, f"{key}: {spec.help}"))
    out.append("\n# --- provider keys and endpoints (keys can also live in `agent keys set`) ---\n")
    for preset in PRESETS.values():
        if preset.key_env:
            out.append(_env_line(preset.key_env, f"{preset.name} API key"))
        if preset.base_url_env:
            out.append(_env_line(preset.base_url_env,
                                 f"{preset.name} endpoint (default {preset.base_url})"))
    out.append("\n# --- directories (standard XDG variables, usually left unset) ---\n")
    for name, (_, help_text) in OTHER_VARIABLES.items():
        if name.startswith("XDG_"):
            out.append(_env_line(name, help_text, commented=True))
    return "".join(out)


def targets(root: Path) -> dict[Path, str]:
    """Each generated file under the repository ``root`` and its expected text."""
    return {root / "configs" / "default.yaml": render_default_yaml(),
            root / ".env.example": render_env_example()}


def main(argv: list[str] | None = None) -> int:
    """Write or check the generated files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the files")
    mode.add_argument("--check", action="store_true", help="exit 1 when a file differs")
    args = parser.parse_args(argv)
    stale = []
    for path, text in targets(args.root).items():
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        if args.write:
            write_atomic(path, text)
            print(f"wrote {path}")
        else:
            stale.append(str(path))
    if stale:
        print("out of date (run python -m agentcli.config_docs --write): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

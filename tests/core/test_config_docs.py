"""The settings table is the one source of configs/default.yaml and .env.example."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from agentcli.config import FIELDS, Settings, load_settings
from agentcli.config_docs import main, render_env_example, targets

REPO = Path(__file__).resolve().parents[2]


def test_committed_files_match_the_table() -> None:
    for path, text in targets(REPO).items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} is stale: run python -m agentcli.config_docs --write")
    assert main(["--root", str(REPO), "--check"]) == 0


def test_check_reports_a_stale_file(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "default.yaml").write_text("model: null\n")
    (tmp_path / ".env.example").write_text(render_env_example())
    assert main(["--root", str(tmp_path), "--check"]) == 1
    assert main(["--root", str(tmp_path), "--write"]) == 0
    assert main(["--root", str(tmp_path), "--check"]) == 0


def test_default_yaml_lists_every_key_with_its_default() -> None:
    data = yaml.safe_load((REPO / "configs" / "default.yaml").read_text())
    assert list(data) == list(FIELDS)
    for key in ("tool_policy", "approve", "tools_module", "yaml_tools", "mcp_servers",
                "self_ask_tool", "aliases", "model_options", "system", "prompt_file"):
        assert key in data
    assert load_settings(REPO / "configs" / "default.yaml", env={}) == Settings()


def _listed_variables() -> set[str]:
    text = (REPO / ".env.example").read_text()
    return set(re.findall(r"^(?:# )?([A-Z][A-Z0-9_]*)=", text, flags=re.M))


def test_env_example_lists_every_variable_the_code_reads() -> None:
    listed = _listed_variables()
    for name in ("AGENT_APPROVE", "AGENT_TOOLS_MODULE", "AGENT_CONFIG", "DASHSCOPE_API_KEY",
                 "OLLAMA_BASE_URL", "AGENT_DB", "AGENT_SYSTEM"):
        assert name in listed
    assert {f.env for f in FIELDS.values() if f.env} <= listed
    read: set[str] = set()
    pattern = re.compile(r"""(?:env|environ)(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']""")
    for path in (REPO / "agentcli").rglob("*.py"):
        read |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert read, "the scan found no environment reads: the pattern is broken"
    assert read <= listed, f"read but not in .env.example: {sorted(read - listed)}"


def test_each_env_variable_belongs_to_one_setting() -> None:
    names = [f.env for f in FIELDS.values() if f.env]
    assert len(names) == len(set(names))

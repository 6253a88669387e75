"""A YAML alias bomb (1 KB, nine levels of nine aliases) in a template's `defaults` or a
config's `mcp_servers.*.env` is one clear line and exit 2, at once: the one YAML loader
bounds alias expansion. Real `agent` entry point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentcli.saved_templates import templates_dir
from agentcli.yaml_loader import MAX_YAML_NODES, YAMLBombError, load_yaml


def bomb(indent: str) -> str:
    lines = [f'{indent}a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"{indent}a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def agent(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=env, timeout=60, cwd=cwd, stdin=subprocess.DEVNULL)


def test_a_template_defaults_bomb_is_one_line(tmp_path: Path) -> None:
    text = "prompt: hi $x\ndefaults:\n" + bomb("  ")
    assert len(text) < 1100
    templates_dir().mkdir(parents=True, exist_ok=True)
    (templates_dir() / "boom.yaml").write_text(text)
    proc = agent("run", "-T", "boom", "-m", "openai/x", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "alias bomb" in proc.stderr and "boom.yaml" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_a_config_mcp_env_bomb_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("mcp_servers:\n  s:\n    command: echo\n    env:\n" + bomb("      "))
    proc = agent("tools", "list", "--config", str(config), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "alias bomb" in proc.stderr and str(config) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_ordinary_aliases_load_and_a_self_reference_is_refused() -> None:
    text = "base: &b {model: openai/x, temperature: 0}\nrun: *b\nchat: *b\n"
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml("") is None
    with pytest.raises(YAMLBombError, match="refers to the value that contains it"):
        load_yaml("a: &a [1, *a]\n")
    with pytest.raises(YAMLBombError, match=f"{MAX_YAML_NODES:,}"):
        load_yaml(bomb(""))

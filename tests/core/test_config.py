"""Configuration: precedence, profiles, and errors that name the source, the key and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentcli.config import FIELDS, Settings, load_settings
from agentcli.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    return path


def test_defaults_match_configs_default_yaml() -> None:
    data = yaml.safe_load((REPO / "configs" / "default.yaml").read_text())
    assert load_settings(REPO / "configs" / "default.yaml", env={}) == Settings()
    assert set(data) <= set(FIELDS)


def test_precedence_flag_over_env_over_file(tmp_path: Path) -> None:
    path = write(tmp_path, "max_iterations: 4\nmodel: openai/from-file\nagent: x-file\n")
    env = {"AGENT_MAX_ITERATIONS": "7", "AGENT_MODEL": "openai/from-env"}
    s = load_settings(path, env=env, flags={"max_iterations": 9})
    assert s.max_iterations == 9 and s.sources["max_iterations"] == "flag"
    assert s.model == "openai/from-env" and s.sources["model"] == "environment"
    assert s.agent == "x-file" and s.sources["agent"] == str(path)


def test_config_from_env_variable(tmp_path: Path) -> None:
    path = write(tmp_path, "tools: [llm-math]\nmax_execution_time: 2.5\n")
    s = load_settings(None, env={"AGENT_CONFIG": str(path)})
    assert s.max_execution_time == 2.5


def test_profiles(tmp_path: Path) -> None:
    path = write(
        tmp_path, "profiles:\n  local:\n    model: ollama/qwen2.5\n    max_iterations: 3\n"
    )
    s = load_settings(path, env={}, flags={"profile": "local"})
    assert s.model == "ollama/qwen2.5" and s.max_iterations == 3
    with pytest.raises(ConfigError, match=r"unknown profile 'remote'.*local"):
        load_settings(path, env={}, flags={"profile": "remote"})


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("max_iter: 3\n", r"unknown key 'max_iter' \(did you mean 'max_iterations'\?\)"),
        ("max_iterations: abc\n", r"'max_iterations' must be a positive integer or null"),
        ("max_iterations: 0\n", r"'max_iterations' must be a positive integer"),
        ("early_stopping_method: maybe\n", r"must be one of auto, force, generate, got 'maybe'"),
        ("temperature: 5\n", r"'temperature' must be a number from 0.0 to 2.0"),
        ("tools: 3\n", r"'tools' must be a list of names"),
        ("verbose: perhaps\n", r"'verbose' must be true or false"),
        ("- a\n- b\n", r"top level must be a mapping"),
        ("model: [unclosed\n", r"line \d+"),
    ],
)
def test_bad_file_values_name_file_and_key(tmp_path: Path, text: str, pattern: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=pattern) as info:
        load_settings(path, env={})
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_env_value_names_variable() -> None:
    with pytest.raises(ConfigError, match="environment AGENT_MAX_TIME: 'max_execution_time'"):
        load_settings(None, env={"AGENT_MAX_TIME": "soon"})


def test_bad_flag_value_names_flag() -> None:
    with pytest.raises(ConfigError, match="--early-stopping-method"):
        load_settings(None, env={}, flags={"early_stopping_method": "later"})


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings("/nonexistent/agent.yaml", env={})


def test_comma_separated_tools_from_env() -> None:
    assert load_settings(None, env={"AGENT_TOOLS": "llm-math, wikipedia"}).tools == [
        "llm-math", "wikipedia",
    ]

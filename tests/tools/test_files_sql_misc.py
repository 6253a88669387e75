"""File tools confined to a root, SQLite tools, human/current_datetime/sleep."""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.tools import Tool, load_tools

FILE_TOOLS = ["read_file", "write_file", "list_directory", "file_search", "copy_file",
              "move_file", "file_delete"]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, dict[str, Tool]]:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha")
    (root / "sub" / "b.py").write_text("print(1)")
    (tmp_path / "secret.txt").write_text("top secret")
    tools = load_tools(FILE_TOOLS, allow_dangerous_tools=True, files_root=str(root))
    return root, {t.name: t for t in tools}


def test_write_tools_are_dangerous() -> None:
    with pytest.raises(ToolLoadError, match="write_file"):
        load_tools(["write_file"])
    assert not load_tools(["read_file"])[0].dangerous


def test_file_tools_work(files: tuple[Path, dict[str, Tool]]) -> None:
    root, t = files
    assert t["read_file"].run("a.txt") == "alpha"
    assert t["list_directory"].run(".") == "a.txt\nsub/"
    assert t["file_search"].run({"pattern": "*.py"}) == "sub/b.py"
    t["write_file"].run({"file_path": "new/c.txt", "text": "gamma"})
    t["write_file"].run({"file_path": "new/c.txt", "text": "!", "append": True})
    assert (root / "new" / "c.txt").read_text() == "gamma!"
    t["copy_file"].run({"source_path": "a.txt", "destination_path": "a2.txt"})
    t["move_file"].run({"source_path": "a2.txt", "destination_path": "sub/a3.txt"})
    assert (root / "sub" / "a3.txt").read_text() == "alpha" and not (root / "a2.txt").exists()
    t["file_delete"].run("sub/a3.txt")
    assert not (root / "sub" / "a3.txt").exists()


@pytest.mark.parametrize("bad", ["../secret.txt", "sub/../../secret.txt", "/etc/passwd"])
def test_path_traversal_refused(files: tuple[Path, dict[str, Tool]], bad: str) -> None:
    _, t = files
    for name, arg in (("read_file", bad), ("file_delete", bad),
                      ("write_file", {"file_path": bad, "text": "x"}),
                      ("copy_file", {"source_path": "a.txt", "destination_path": bad})):
        with pytest.raises(ToolInputError, match="outside the allowed root"):
            t[name].run(arg)


def test_absolute_path_inside_root_allowed(files: tuple[Path, dict[str, Tool]]) -> None:
    root, t = files
    assert t["read_file"].run(str(root / "a.txt")) == "alpha"


def test_symlink_escape_refused(files: tuple[Path, dict[str, Tool]], tmp_path: Path) -> None:
    root, t = files
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    os.symlink(tmp_path, root / "outdir")
    with pytest.raises(ToolInputError, match="outside the allowed root"):
        t["read_file"].run("link.txt")
    with pytest.raises(ToolInputError, match="outside the allowed root"):
        t["write_file"].run({"file_path": "outdir/planted.txt", "text": "x"})
    with pytest.raises(ToolInputError, match="outside the allowed root"):
        t["list_directory"].run("outdir")
    assert not (tmp_path / "planted.txt").exists()
    assert "secret" not in t["file_search"].run({"pattern": "*"})


def test_read_file_cap(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("y" * 1000)
    [read] = load_tools(["read_file"], files_root=str(tmp_path), files_max_bytes=10)
    assert read.run("big.txt").startswith("y" * 10 + "\n...[file cut at 10 bytes]")


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "shop.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL);"
                       "INSERT INTO items (name, price) VALUES ('pen', 1.5), ('book', 12.0);"
                       "CREATE TABLE users (id INTEGER);")
    conn.commit()
    conn.close()
    return str(path)


def test_sql_tools_read_only_by_default(db: str) -> None:
    tools = {t.name: t for t in load_tools(
        ["sql_db_list_tables", "sql_db_schema", "sql_db_query"], sqlite_path=db)}
    assert tools["sql_db_list_tables"].run("") == "items, users"
    schema = tools["sql_db_schema"].run("items")
    assert "CREATE TABLE items" in schema and "pen\t1.5" in schema
    assert tools["sql_db_query"].run("SELECT name FROM items ORDER BY price") == \
        "[('pen',), ('book',)]"
    assert not tools["sql_db_query"].dangerous
    with pytest.raises(ToolInputError, match="read-only"):
        tools["sql_db_query"].run("DELETE FROM items")
    with pytest.raises(ToolInputError, match="unknown table"):
        tools["sql_db_schema"].run("nope")


def test_sql_writes_need_the_dangerous_opt_in(db: str) -> None:
    with pytest.raises(ToolLoadError, match="sql_db_query"):
        load_tools(["sql_db_query"], sqlite_path=db, sql_allow_writes=True)
    [query] = load_tools(["sql_db_query"], allow=["sql_db_query"], sqlite_path=db,
                         sql_allow_writes=True)
    assert query.dangerous
    assert "1 row(s) changed" in query.run("DELETE FROM items WHERE name = 'pen'")


def test_sql_needs_path_and_existing_file(tmp_path: Path) -> None:
    with pytest.raises(ToolLoadError, match="sqlite_path"):
        load_tools(["sql_db_query"])
    with pytest.raises(ToolLoadError, match="no SQLite file"):
        load_tools(["sql_db_query"], sqlite_path=str(tmp_path / "missing.db"))


def test_human_refuses_without_terminal_and_asks_with_one() -> None:
    [human] = load_tools(["human"])
    with pytest.raises(ToolInputError, match="no person"):
        human.run("Which city?")
    [human] = load_tools(["human"], human_input=lambda q: f"you asked {q}")
    assert human.run("Which city?") == "you asked Which city?"


def test_datetime_and_sleep() -> None:
    [now, sleep] = load_tools(["current_datetime", "sleep"], sleep_max=1)
    assert datetime.fromisoformat(now.run("")).tzinfo is not None
    assert sleep.run("0.01") == "Slept for 0.01 seconds."
    with pytest.raises(ToolInputError, match="0 to 1 seconds"):
        sleep.run("5")


@pytest.mark.parametrize("sql", [
    "VACUUM INTO '{dir}/copy.db'",
    "vacuum",
    "/* hidden */ VACUUM main INTO '{dir}/copy.db'",
    "ATTACH DATABASE '{dir}/new.db' AS other",
    "DETACH DATABASE main",
    "PRAGMA user_version = 7",
    "PRAGMA journal_mode = WAL",
    "PRAGMA optimize",
    "SELECT load_extension('{dir}/evil')",
])
def test_read_only_sql_cannot_touch_files(db: str, sql: str, tmp_path: Path) -> None:
    [query] = load_tools(["sql_db_query"], sqlite_path=db)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ToolInputError, match="refused"):
        query.run(sql.format(dir=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no file was created


def test_read_pragmas_still_work(db: str) -> None:
    [query] = load_tools(["sql_db_query"], sqlite_path=db)
    assert "'name'" in query.run("PRAGMA table_info(items)")
    assert query.run("PRAGMA user_version") == "[(0,)]"


def test_writable_sql_still_cannot_attach_files(db: str, tmp_path: Path) -> None:
    [query] = load_tools(["sql_db_query"], allow=["sql_db_query"], sqlite_path=db,
                         sql_allow_writes=True)
    with pytest.raises(ToolInputError, match="refused"):
        query.run(f"VACUUM INTO '{tmp_path}/copy.db'")
    assert not (tmp_path / "copy.db").exists()
    assert query.run("VACUUM") == "OK"  # compacting its own file is a write it may do


def test_zeroblob_bomb_is_refused_quickly(db: str) -> None:
    [query] = load_tools(["sql_db_query"], sqlite_path=db)
    with pytest.raises(ToolInputError, match="too big"):
        query.run("SELECT hex(zeroblob(25000000))")


def test_result_bytes_are_bounded_before_formatting(db: str) -> None:
    [query] = load_tools(["sql_db_query"], sqlite_path=db, sql_max_chars=1000,
                         sql_max_rows=10_000)
    wide = query.run("SELECT hex(zeroblob(400000))")  # one 800 KB value
    assert len(wide) < 1200 and "first row is cut at 1,000 characters" in wide
    many = query.run("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                     "LIMIT 100000) SELECT i, 'row number ' || i FROM n")
    assert len(many) < 1200 and "output cut at 1,000 characters" in many


def test_sql_refusal_through_agent_tools_call(db: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentcli.cli.app import app

    config = tmp_path / "c.yaml"
    config.write_text(f"tool_settings: {{sqlite_path: '{db}'}}\n")
    result = CliRunner().invoke(app, ["tools", "call", "sql_db_query",
                                      f"VACUUM INTO '{tmp_path}/stolen.db'", "-c", str(config)])
    assert "refused" in result.output
    assert not (tmp_path / "stolen.db").exists()

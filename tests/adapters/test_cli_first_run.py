"""The first ten minutes on the CLI: a new database is announced, a wrong file or a mistyped
directory is refused, `serve` prints its banner, imports and backups from the command line."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.adapters.cli_servers import banner
from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService
from tests.conftest import FakeClock

FIXTURES = Path(__file__).parent.parent / "fixtures" / "imports"


def _invoke(*arguments: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(arguments), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _refused(*arguments: str) -> str:
    """Run the real entry point (errors become one line on stderr and exit 1): its stderr."""
    completed = subprocess.run(
        [sys.executable, "-m", "recalld", *arguments],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1
    assert "Traceback" not in completed.stderr
    return completed.stderr


def test_cli_new_database_is_announced_once(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    code, _, stderr = _invoke("--db", str(db), "stats")
    assert code == 0
    assert f"created a new database at {db}" in stderr
    code, _, stderr = _invoke("--db", str(db), "stats")
    assert code == 0
    assert "created a new database" not in stderr


def test_cli_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my shopping list\n", encoding="utf-8")
    stderr = _refused("--db", str(notes), "stats")
    assert "is not a recalld database" in stderr
    assert notes.read_text(encoding="utf-8") == "my shopping list\n"  # untouched


def test_cli_refuses_an_sqlite_file_of_another_program(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    connection.close()
    stderr = _refused("--db", str(other), "stats")
    assert "not a recalld one" in stderr
    assert "invoices" in stderr


def test_cli_refuses_a_missing_directory(tmp_path: Path) -> None:
    stderr = _refused("--db", str(tmp_path / "typo" / "recalld.db"), "stats")
    assert "does not exist" in stderr
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("written", ["~/memories.db", "$HOME/memories.db"])
def test_cli_says_when_no_shell_expanded_the_path(written: str) -> None:
    # As an MCP client's JSON, a systemd unit or a .env file pass RECALLD_DB: unexpanded.
    completed = subprocess.run(
        [sys.executable, "-m", "recalld", "stats"],
        capture_output=True,
        text=True,
        env={**os.environ, "RECALLD_DB": written},
        check=False,
    )
    assert completed.returncode == 1
    first = written.split("/")[0]
    assert f"{first} is taken as it is written (no shell expanded it there)" in completed.stderr


@pytest.mark.parametrize(
    "written", ["typo/~notes.db", "typo/price$5.db", "typo/~/x.db", "typo$5/x.db"]
)
def test_cli_blames_no_shell_for_a_tilde_or_dollar_no_shell_expands(
    tmp_path: Path, written: str
) -> None:
    # A shell expands only a leading ~ and $NAME: "~notes.db" or "$5" is what was meant,
    # and the directory that is missing is the mistake to name.
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / written), "stats"])
    assert result.exit_code == 1
    assert "cannot be created there (a mistyped path?)" in str(result.exception)
    assert "no shell expanded" not in str(result.exception)


def test_serve_banner_says_where_everything_is(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "served.db", embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        lines = banner(service, settings, ["native", "hermes"])
    text = "\n".join(lines)
    assert str(tmp_path / "served.db") in text
    assert "http://127.0.0.1:8765/v1" in text
    assert "http://127.0.0.1:8765/docs" in text
    assert "http://127.0.0.1:8765/mcp" in text
    assert "native, hermes" in text
    assert "tokens" in text
    assert "keyword recall only" in text  # the embedder line names what is (not) running
    assert lines[0].startswith("recalld ")


def test_cli_import_auto_reports_format_and_numbered_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "import.db")
    code, stdout, _ = _invoke("--db", db, "import", str(FIXTURES / "mem0.json"), "--json")
    assert code == 1  # one refused item: reported, the rest imported
    report = json.loads(stdout)
    assert (report["format"], report["created"]) == ("mem0", 3)
    assert [error["item"] for error in report["errors"]] == [4]


def test_cli_ingest_and_backup(tmp_path: Path) -> None:
    db = str(tmp_path / "chat.db")
    transcript = tmp_path / "chat.txt"
    transcript.write_text("Ada: I moved to Hobart.\nBen: How is it?\n", encoding="utf-8")
    code, stdout, _ = _invoke("--db", db, "ingest", str(transcript), "--json")
    assert code == 0
    assert json.loads(stdout)["created"] == 2
    copy = tmp_path / "copy.db"
    code, stdout, _ = _invoke("--db", db, "backup", str(copy))
    assert code == 0
    assert copy.exists()
    assert "restore" in stdout.lower()
    code, stdout, _ = _invoke("--db", str(copy), "list", "--json")
    assert code == 0
    assert {memory["speaker"] for memory in json.loads(stdout)["memories"]} == {"Ada", "Ben"}


def test_cli_backup_restore_commands_work_for_a_path_with_spaces(tmp_path: Path) -> None:
    # macOS's default data directory is "~/Library/Application Support/recalld": the printed
    # restore commands left paths unquoted, so `rm -f` got "…/Application" and
    # "Support/recalld/recalld.db-wal" and deleted files of those names (adversarial pass d61).
    folder = tmp_path / "Application Support" / "it's $HOME"
    folder.mkdir(parents=True)
    db = folder / "my memory.db"
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        kept = service.remember("written before the backup").id
    bystanders = [tmp_path / "Application", tmp_path / "Support"]
    for bystander in bystanders:
        bystander.write_text("not recalld's\n", encoding="utf-8")
    copy = folder / "backup copy.db"
    code, stdout, _ = _invoke("--db", str(db), "backup", str(copy))
    assert code == 0
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        service.remember("written after the backup")
    # The restore by hand (the hint names `recalld restore` first): its `mv` and `cp` lines.
    restore = [line.strip() for line in stdout.splitlines() if line.startswith(("  mv ", "  cp "))]
    assert len(restore) == 2
    # Restoring brings back what was revoked or forgotten since: the hint says so.
    assert "a token revoked or a memory forgotten since then is back" in " ".join(stdout.split())
    subprocess.run(["sh", "-e", "-c", "\n".join(restore)], cwd=tmp_path, check=True)
    for bystander in bystanders:
        assert bystander.read_text(encoding="utf-8") == "not recalld's\n"
    assert Path(f"{db}.old").exists()
    with MemoryService.open(Settings(db=db, embedder="none")) as restored:
        assert restored.stats().count == 1
        assert restored.get(kept).content == "written before the backup"


def test_cli_backups_into_a_directory_in_the_same_second_both_succeed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The name was recalld-<second>.db: a second backup into the same directory within that
    # second was refused ("already exists; give a new file name") though the user gave a
    # directory, not a name (adversarial pass d61).
    from recalld.adapters import cli_transfer

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:
            return cls(2026, 12, 7, 1, 2, 3, tzinfo=UTC)

    monkeypatch.setattr(cli_transfer, "datetime", Frozen)
    db = tmp_path / "live.db"
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        service.remember("one")
    folder = tmp_path / "backups"
    folder.mkdir()
    copies = []
    for _ in range(3):
        code, stdout, _ = _invoke("--db", str(db), "backup", str(folder), "--json")
        assert code == 0
        copies.append(Path(json.loads(stdout)["destination"]).name)
    assert copies == [
        "recalld-20261207T010203Z.db",
        "recalld-20261207T010203Z-2.db",
        "recalld-20261207T010203Z-3.db",
    ]


def test_cli_backup_into_a_directory_takes_the_next_name_when_another_backup_took_it_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two backups at once into one directory (of two databases, from one cron line) chose the
    # same free name; the one that published second failed with "already exists; give a new
    # file name", though no name was given (review of pass d61).
    from recalld.adapters import cli_transfer
    from recalld.store import sqlite_file

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:
            return cls(2026, 12, 7, 1, 2, 3, tzinfo=UTC)

    monkeypatch.setattr(cli_transfer, "datetime", Frozen)
    copy_pages = sqlite_file._copy_pages
    taken: list[Path] = []

    def another_backup_publishes_first(
        source: Any, partial: Path, destination: Path
    ) -> tuple[int, int, set[int]]:
        if not taken:  # the other backup links its copy under the name while this one copies
            taken.append(destination)
            destination.write_bytes(b"the other backup")
        return copy_pages(source, partial, destination)

    monkeypatch.setattr(sqlite_file, "_copy_pages", another_backup_publishes_first)
    db = tmp_path / "live.db"
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        service.remember("one")
    folder = tmp_path / "backups"
    folder.mkdir()
    code, stdout, stderr = _invoke("--db", str(db), "backup", str(folder), "--json")
    assert code == 0, stderr
    assert [path.name for path in taken] == ["recalld-20261207T010203Z.db"]
    assert Path(json.loads(stdout)["destination"]).name == "recalld-20261207T010203Z-2.db"
    assert taken[0].read_bytes() == b"the other backup"  # the other one's copy is untouched
    assert sorted(path.name for path in folder.iterdir()) == [
        "recalld-20261207T010203Z-2.db",
        "recalld-20261207T010203Z.db",
    ]
    # A name the user gave is never swapped for another.
    named = folder / "mine.db"
    taken.clear()
    with pytest.raises(StorageError, match="already exists; give a new file name"):
        _invoke("--db", str(db), "backup", str(named))
    assert named.read_bytes() == b"the other backup"


def test_cli_backup_to_a_missing_directory_written_with_a_slash_is_refused(
    tmp_path: Path,
) -> None:
    # `recalld backup /backups/tonight/` where no such directory exists: Path() dropped the
    # "/" and the copy became a file named "tonight" (adversarial pass d61).
    db = tmp_path / "live.db"
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        service.remember("one")
    meant = tmp_path / "tonight"
    result = CliRunner().invoke(cli, ["--db", str(db), "backup", f"{meant}/"])
    assert result.exit_code == 2
    assert "names a directory" in result.stderr
    assert "DESTINATION" in result.stderr
    assert not meant.exists()
    meant.mkdir()
    code, stdout, _ = _invoke("--db", str(db), "backup", f"{meant}/", "--json")
    assert code == 0
    assert Path(json.loads(stdout)["destination"]).parent == meant


def _database_of_schema_5(path: Path) -> None:
    """A database as a recalld of schema 5 left it, with one memory."""
    import apsw

    from recalld.store.migrations import MIGRATIONS

    connection = apsw.Connection(str(path))
    connection.execute("PRAGMA journal_mode = WAL")
    for number, migration in enumerate(MIGRATIONS[:5], start=1):
        migration(connection.execute)
        connection.execute(f"PRAGMA user_version = {number}")
    connection.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    connection.executemany(
        "INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00Z')",
        [(number,) for number in range(1, 6)],
    )
    stamp = "2026-01-01T00:00:00.000000Z"
    connection.execute(
        "INSERT INTO memories(seq, id, namespace, content, tags, created_at, updated_at)"
        " VALUES (1, 'a', 'default', 'old apples', '[]', ?, ?)",
        (stamp, stamp),
    )
    connection.close()


def _schema_of(path: Path) -> int:
    connection = sqlite3.connect(path)
    try:
        return int(connection.execute("SELECT max(version) FROM schema_migrations").fetchone()[0])
    finally:
        connection.close()


def test_cli_backup_of_a_database_not_yet_upgraded_copies_it_as_it_is(tmp_path: Path) -> None:
    # `recalld backup` opened the store, which migrates: the backup taken right after
    # installing a new recalld was of the upgraded database, and upgraded the database
    # itself, so nothing was left that the old recalld could open (adversarial pass d61).
    db = tmp_path / "old.db"
    _database_of_schema_5(db)
    copy = tmp_path / "before-upgrade.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "backup", str(copy), "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["schema_version"], report["memories"]) == (5, 1)
    assert "copied as it is" in result.stderr
    # It keeps what the upgrade removes (expired memories, a forgotten memory's traces that
    # migration 24 clears): the note says to delete it once the upgrade has worked.
    assert "delete it once the upgrade has worked" in " ".join(result.stderr.split())
    assert _schema_of(db) == 5  # the database was left as the old recalld wrote it
    assert _schema_of(copy) == 5
    with MemoryService.open(Settings(db=copy, embedder="none")) as restored:
        assert restored.get("a").content == "old apples"  # this recalld upgrades the copy


def test_cli_backup_holds_no_memory_whose_ttl_has_passed(tmp_path: Path) -> None:
    # `recalld backup` opens the store, not the service: it skipped the purge that
    # MemoryService.backup runs, so a memory expired but not purged yet (no server's
    # purge had come round) was copied whole, and counted (review rj57).
    db = tmp_path / "ttl.db"
    written = FakeClock(datetime(2020, 1, 1, tzinfo=UTC))  # long expired by now
    with MemoryService.open(Settings(db=db, embedder="none"), clock=written) as service:
        for index in range(5):
            service.remember(f"filler {index}")
        service.remember("QWXEXPIREDSECRET " * 40, ttl_seconds=60)
    assert b"QWXEXPIREDSECRET" in db.read_bytes()  # closed: the log folded in
    copy = tmp_path / "copy.db"
    code, stdout, _ = _invoke("--db", str(db), "backup", str(copy), "--json")
    assert code == 0
    assert json.loads(stdout)["memories"] == 5
    assert b"QWXEXPIREDSECRET" not in copy.read_bytes()
    with MemoryService.open(Settings(db=copy, embedder="none"), clock=written) as restored:
        assert restored.stats().count == 5
        assert restored.stats().pending_scrubs == 0
    with MemoryService.open(Settings(db=db, embedder="none"), clock=written) as source:
        assert source.stats().count == 5  # purged in the source too, not only skipped


def test_cli_ingest_refuses_a_repeated_message_id(tmp_path: Path) -> None:
    db = str(tmp_path / "chat.db")
    transcript = tmp_path / "chat.json"
    messages = [
        {"id": "a", "speaker": "Ana", "content": "My flight is on Friday at 9am"},
        {"id": "a", "speaker": "Ana", "content": "ok"},
    ]
    transcript.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    stderr = _refused("--db", db, "ingest", str(transcript))
    assert "messages[1].id" in stderr
    assert "messages[0].id" in stderr
    code, stdout, _ = _invoke("--db", db, "list", "--json")
    assert code == 0
    assert json.loads(stdout)["memories"] == []


def test_cli_ingest_refuses_a_field_given_under_two_names(tmp_path: Path) -> None:
    # `created 1`, exit 0, the speaker "Al" kept and "Bo" dropped without a word.
    db = str(tmp_path / "chat.db")
    transcript = tmp_path / "chat.json"
    first = {"role": "user", "content": "My flight is on Friday", "speaker": "Al"}
    both = {"role": "user", "content": "hello there", "name": "Al", "speaker": "Bo"}
    for text, position in (
        (json.dumps([first, both]), "messages[1]"),
        (json.dumps({"messages": [first, both]}), "messages[1]"),
        (json.dumps(first) + "\n" + json.dumps(both) + "\n", "line 2"),
    ):
        transcript.write_text(text, encoding="utf-8")
        stderr = _refused("--db", db, "ingest", str(transcript))
        assert stderr == f'error: {position}: give "name" or "speaker", not both\n'
    code, stdout, _ = _invoke("--db", db, "list", "--json")
    assert code == 0
    assert json.loads(stdout)["memories"] == []  # the message before it is not written


def test_cli_ingest_of_a_document_without_messages_says_so(tmp_path: Path) -> None:
    # "{}" was read as one message: "messages[0].content: Field required".
    db = str(tmp_path / "chat.db")
    transcript = tmp_path / "chat.json"
    for document in ({}, {"title": "no messages here"}):
        transcript.write_text(json.dumps(document), encoding="utf-8")
        stderr = _refused("--db", db, "ingest", str(transcript))
        assert stderr.startswith("error: file: holds no messages"), stderr
    transcript.write_text(json.dumps({"text": "one message", "sender": "Ana"}), encoding="utf-8")
    assert _invoke("--db", db, "ingest", str(transcript))[0] == 0


@pytest.mark.postgres
def test_cli_on_postgres_banner_migrate_and_backup_hide_the_password(
    postgres_url: str, tmp_path: Path
) -> None:
    password = postgres_url.split("//", 1)[1].split("@", 1)[0].split(":", 1)[1]
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        text = "\n".join(banner(service, settings, ["native"]))
    assert "postgresql://" in text
    assert password not in text
    code, stdout, _ = _invoke("--db", postgres_url, "migrate", "--json")
    assert code == 0
    report = json.loads(stdout)
    assert report["schema_version"] >= 12
    assert password not in report["database"]
    stderr = _refused("--db", postgres_url, "backup", str(tmp_path / "copy.db"))
    assert "pg_dump" in stderr
    assert password not in stderr
    assert not (tmp_path / "copy.db").exists()


def test_cli_ingest_and_core_apply_refuse_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Ana: a café au lait\n".encode("latin-1"))
    assert _refused("--db", str(db), "ingest", str(latin1)) == (
        f"error: {latin1}: is not UTF-8 text (byte 0xe9 at offset 10, line 1)\n"
    )
    utf16 = tmp_path / "windows.txt"
    utf16.write_bytes("Ana: hi\nBen: hello\n".encode("utf-16"))
    assert _refused("--db", str(db), "ingest", str(utf16)) == (
        f"error: {utf16}: is not UTF-8 text (byte 0xff at offset 0, line 1); it starts with a"
        " UTF-16 byte-order mark: save it as UTF-8\n"
    )
    piped = subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), "ingest", "-"],
        input=b"Ana: hi\nBen: caf\xe9\n",
        capture_output=True,
        check=False,
    )
    assert piped.returncode == 1
    assert piped.stderr == b"error: stdin: is not UTF-8 text (byte 0xe9 at offset 16, line 2)\n"
    batch = tmp_path / "batch.json"
    operations = [{"action": "add", "content": "Ana drinks café au lait"}]
    text = json.dumps({"target": "user", "operations": operations}, ensure_ascii=False)
    batch.write_bytes(text.encode("latin-1"))
    assert _refused("--db", str(db), "core", "apply", str(batch)).startswith(
        f"error: {batch}: is not UTF-8 text (byte 0xe9 at offset "
    )
    assert not db.exists()  # refused before the database was opened


def test_cli_serve_on_an_open_address_without_a_token_refuses_before_anything(
    tmp_path: Path,
) -> None:
    fresh = tmp_path / "fresh.db"
    stderr = _refused("--db", str(fresh), "serve", "--host", "0.0.0.0", "--port", "0")
    assert stderr.startswith("error: host: refusing to listen on 0.0.0.0: no API token exists")
    assert stderr.count("\n") == 1  # no banner
    assert list(tmp_path.iterdir()) == []  # no database created
    existing = tmp_path / "existing.db"
    assert _invoke("--db", str(existing), "remember", "kept")[0] == 0
    stderr = _refused("--db", str(existing), "serve", "--host", "0.0.0.0", "--port", "0")
    assert stderr.startswith("error: host: refusing to listen on 0.0.0.0")
    assert stderr.count("\n") == 1


@pytest.mark.parametrize("blank", ["", " "])
def test_cli_serve_refuses_an_empty_host_as_the_variable_is(tmp_path: Path, blank: str) -> None:
    # With a token, "--host ''" bound every interface, shown as "http://:PORT".
    db = tmp_path / "tokens.db"
    assert _invoke("--db", str(db), "token", "create", "t", "--scope", "default:read")[0] == 0
    completed = subprocess.run(  # a timeout: the old code served until killed
        [sys.executable, "-m", "recalld", "--db", str(db), "serve", "--host", blank, "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr == (
        "error: --host: is empty; give an address (127.0.0.1, or 0.0.0.0 for every interface)\n"
    )


def test_cli_serve_on_a_port_in_use_is_one_line_before_the_banner(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        stderr = _refused("--db", str(tmp_path / "busy.db"), "serve", "--port", str(port))
        mcp = _refused(
            "--db", str(tmp_path / "busy.db"), "mcp", "--transport", "http", "--port", str(port)
        )
    assert stderr == (
        f"error: port: {port} on 127.0.0.1 is already in use (another server?); choose another"
        " with --port or RECALLD_PORT\n"
    )
    assert mcp == (
        f"error: port: {port} on 127.0.0.1 is already in use (another server?); choose another"
        " with --port\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("arguments", "option"),
    [
        (["mcp", "--dialect", "nosuch"], "--dialect"),
        (["mcp", "--dialect", "native,madeleine"], "--dialect"),
        (["mcp", "--namespaces", "bad ns!"], "--namespaces"),
        (["mcp", "--transport", "http", "--host", "0.0.0.0", "--port", "0"], "host"),
        (["serve", "--port", "0", "--mcp-dialect", "nosuch"], "--mcp-dialect"),
    ],
)
def test_cli_server_refuses_a_bad_option_before_creating_anything(
    tmp_path: Path, arguments: list[str], option: str
) -> None:
    stderr = _refused("--db", str(tmp_path / "new.db"), *arguments)
    assert stderr.startswith(f"error: {option}: ")
    assert stderr.count("\n") == 1  # not "created a new database", nor a worker's traceback
    assert list(tmp_path.iterdir()) == []


def test_server_urls_bracket_an_ipv6_address_once() -> None:
    from recalld.adapters._network import base_url

    assert base_url("[::1]", 8766) == base_url("::1", 8766) == "http://[::1]:8766"
    assert base_url("127.0.0.1", 8766) == "http://127.0.0.1:8766"


@pytest.mark.parametrize("port_given", ["free", "0"])
def test_cli_mcp_over_http_says_where_it_listens(tmp_path: Path, port_given: str) -> None:
    from tests.adapters.mcp_support import free_port, stop

    port = free_port() if port_given == "free" else 0
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "recalld", "--db", str(tmp_path / "m.db"), "mcp"),
            *("--transport", "http", "--port", str(port), "--dialect", "native,batbox"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
    )
    said_so_far = b""
    lines: list[str] = []
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 30
        while said_so_far.count(b"\n") < 2 and time.monotonic() < deadline:
            # Read the pipe itself (a buffered readline could hold the second line where
            # select no longer sees it); a server that says nothing more cannot hang this.
            ready, _, _ = select.select([process.stderr], [], [], 1.0)
            if ready:
                chunk = os.read(process.stderr.fileno(), 4096)
                if not chunk:
                    break
                said_so_far += chunk
        lines = said_so_far.decode().splitlines(keepends=True)[:2]
        assert len(lines) == 2, lines
        said = lines[1].removeprefix("recalld MCP (streamable HTTP, native, batbox) at ")
        url = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/mcp\n", said)
        assert url is not None, lines
        if port:
            assert int(url[1]) == port
        # The port said is the one it listens on (port 0: chosen before it starts).
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", int(url[1])), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nothing listens on the port it said"
                time.sleep(0.05)
    finally:
        stop(process)
    assert lines[0].startswith("created a new database at "), lines


def test_cli_never_makes_a_directory_named_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's default location written out in an MCP client's JSON: no shell expands
    # it, and a directory "~" with a new empty memory appeared in the working directory.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--db", "~/.local/share/recalld/recalld.db", "stats"])
    assert result.exit_code == 1
    assert "~ is taken as it is written" in str(result.exception)
    assert not (tmp_path / "~").exists()


def test_cli_without_a_home_names_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A container run under a uid with no passwd entry and no HOME: platformdirs' own
    # RuntimeError was a traceback on the first command.
    import pwd

    def no_entry(uid: int) -> pwd.struct_passwd:
        raise KeyError(uid)

    for name in ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    refused = CliRunner().invoke(cli, ["stats"])
    assert refused.exit_code == 1
    assert "RECALLD_DB: is not set, and this user has no home directory" in str(refused.exception)
    monkeypatch.setenv("RECALLD_CACHE_DIR", str(tmp_path / "cache"))
    given = CliRunner().invoke(cli, ["--db", str(tmp_path / "given.db"), "stats"])
    assert given.exit_code == 0, given.output


@pytest.mark.parametrize(
    ("batch", "expected"),
    [
        # Went to the default namespace: the file's namespace was ignored.
        (
            {"target": "memory", "namespace": "work", "operations": [{"action": "add"}]},
            'not "namespace" (choose the namespace with --namespace)',
        ),
        # The single operation was ignored beside the batch (REST refuses both together).
        (
            {"target": "memory", "action": "add", "content": "one", "operations": []},
            'not "action", "content"',
        ),
        # Was "target: must be 'user' or 'memory', got 'None'": None was never given.
        ({"operations": [{"action": "add", "content": "x"}]}, 'give the "target"'),
        # A target that is none was refused only after the database was created.
        (
            {"target": "User", "operations": [{"action": "add", "content": "x"}]},
            '"target" must be "user" or "memory", got "User"',
        ),
        ({"target": None, "operations": []}, '"target" must be "user" or "memory", got null'),
        # Every unknown key was named, each cut to 40 characters without its length.
        (
            {"target": "memory", "operations": [], **{"k" * 100 + str(n): 1 for n in range(9)}},
            f'not "{"k" * 80}... (101 characters)", ',
        ),
    ],
)
def test_cli_core_apply_refuses_a_batch_file_key_it_would_ignore(
    tmp_path: Path, batch: dict[str, object], expected: str
) -> None:
    db = tmp_path / "core.db"
    path = tmp_path / "batch.json"
    path.write_text(json.dumps(batch), encoding="utf-8")
    code, _, stderr = _invoke("--db", str(db), "core", "apply", str(path))
    assert code == 2
    assert expected in stderr
    assert len(stderr) < 1_000
    assert not db.exists()  # refused before anything was opened or written

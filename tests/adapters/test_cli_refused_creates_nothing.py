"""A command `recalld` refuses, or one that finds nothing to do, creates no database
(adversarial pass e66): a mistyped --db left a new, empty file behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recalld.adapters.cli import main
from recalld.config import Settings
from recalld.embeddings import Embedder


def _exit_status(
    monkeypatch: pytest.MonkeyPatch, *arguments: str, embedder: str = "none"
) -> int | str | None:
    monkeypatch.setattr("sys.argv", ["recalld", *arguments])
    monkeypatch.setenv("RECALLD_EMBEDDER", embedder)
    monkeypatch.setenv("RECALLD_GRAPH_EXTRACTOR", "none")
    try:
        main()
    except SystemExit as stopped:
        return stopped.code
    return 0  # main returns when the command succeeds


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        (("list", "--limit", "0"), "limit"),
        (("recent", "--limit", "0"), "limit"),
        (("search", "tea", "--limit", "0"), "limit"),
        (("recall", "tea", "--limit", "100000"), "limit"),
        (("explain", "tea", "an-id", "--limit", "0"), "limit"),
        (("update", "an-id"), "changes"),
        (("get", "--seq", "0"), "seq"),
        (("graph", "entities", "--limit", "0"), "limit"),
        (("graph", "relations", "--limit", "0"), "limit"),
        (("graph", "observations", "Ada", "--limit", "0"), "limit"),
    ],
)
def test_a_refused_command_creates_no_database(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    arguments: tuple[str, ...],
    field: str,
) -> None:
    db = tmp_path / "never.db"
    assert _exit_status(monkeypatch, "--db", str(db), *arguments, "--json") == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert (error["type"], error["field"]) == ("validation_error", field)
    assert list(tmp_path.iterdir()) == []


def test_forget_on_a_missing_database_forgets_nothing_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "never.db"
    # As on a database without that memory: idempotent, exit 0, deleted false.
    assert _exit_status(monkeypatch, "--db", str(db), "forget", "x", "--json") == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == {"deleted": False, "scrubbed": True, "scrub": "none"}
    assert list(tmp_path.iterdir()) == []


def test_cancel_and_import_of_a_directory_refused_on_a_missing_database_create_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review of pass e66: both created the database, then refused.
    db = tmp_path / "never.db"
    folder = tmp_path / "folder"
    folder.mkdir()
    assert _exit_status(monkeypatch, "--db", str(db), "cancel", "nope", "--json") == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["type"] == "not_found"
    assert "no intention with id 'nope'" in error["message"]
    imported = ("import", str(folder), "--format", "recalld", "--json")
    assert _exit_status(monkeypatch, "--db", str(db), *imported) == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert (error["type"], error["field"]) == ("validation_error", "file")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["folder"]


@pytest.mark.parametrize(
    ("name", "content", "field"),
    [
        ("backup.db", b"SQLite format 3\x00" + bytes(84), "file"),  # a backup given to import
        ("memories.zip", b"PK\x03\x04" + bytes(26), "file"),
        ("notes.txt", "hello".encode("utf-16"), "file"),
        ("what.json", b'{"neither": "format"}\n', "format"),
    ],
)
def test_import_of_a_file_no_importer_reads_creates_no_database(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes,
    field: str,
) -> None:
    # Adversarial pass d69: the database was created, then the file refused.
    db = tmp_path / "never.db"
    given = tmp_path / name
    given.write_bytes(content)
    assert _exit_status(monkeypatch, "--db", str(db), "import", str(given), "--json") == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert (error["type"], error["field"]) == ("validation_error", field)
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]


def test_token_revoke_on_a_missing_database_revokes_nothing_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "never.db"
    assert _exit_status(monkeypatch, "--db", str(db), "token", "revoke", "nope", "--json") == 1
    assert json.loads(capsys.readouterr().out) == {"revoked": False}
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("arguments", "status", "answer"),
    [
        (("get", "an-id"), 1, "not_found"),
        (("update", "an-id", "--title", "t"), 1, "not_found"),
        (("explain", "tea", "an-id"), 1, "not_found"),
        (("list",), 0, {"memories": [], "next_cursor": None}),
        (("recent",), 0, {"memories": [], "next_cursor": None}),
        (("search", "tea"), 0, []),
        (("recall", "tea"), 0, []),
        (("graph", "show", "Ada"), 1, "not_found"),
        (("graph", "observations", "Ada"), 1, "not_found"),
        (("graph", "entities"), 0, {"entities": [], "next_cursor": None}),
        (("graph", "relations"), 0, {"relations": [], "next_cursor": None}),
        (("core", "show"), 0, None),
        (("core", "remove", "user", "tea"), 1, "validation_error"),
        (("core", "patch", "user", "tea", "coffee"), 1, "validation_error"),
        (("intentions",), 0, {"intentions": []}),
        (("pending",), 0, []),
    ],
)
def test_a_command_that_reads_or_changes_what_is_stored_creates_no_database(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    arguments: tuple[str, ...],
    status: int,
    answer: object,
) -> None:
    # Adversarial pass a67: each created an empty database at a mistyped --db, then
    # answered as an empty database does. It still answers so, and says there is none.
    db = tmp_path / "never.db"
    assert _exit_status(monkeypatch, "--db", str(db), *arguments, "--json") == status
    output = capsys.readouterr()
    notice, *rest = output.err.splitlines()
    assert notice == f"no database at {db}: nothing was created"
    if status:
        assert json.loads(rest[-1])["error"]["type"] == answer
    elif answer is not None:
        assert json.loads(output.out) == answer
    assert list(tmp_path.iterdir()) == []


def test_a_command_that_writes_a_new_memory_still_creates_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "new.db"
    arguments = ("core", "add", "user", "likes tea", "--json")
    assert _exit_status(monkeypatch, "--db", str(db), *arguments) == 0
    assert "created a new database" in capsys.readouterr().err
    assert db.exists()
    assert _exit_status(monkeypatch, "--db", str(db), "core", "remove", "user", "tea") == 0
    assert "no database" not in capsys.readouterr().err


def test_token_list_on_a_missing_database_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Adversarial pass a67: `token list` created the database without a word, to answer
    # that there is no token.
    db = tmp_path / "never.db"
    assert _exit_status(monkeypatch, "--db", str(db), "token", "list", "--json") == 0
    output = capsys.readouterr()
    assert json.loads(output.out) == []
    assert output.err.strip() == f"no database at {db}: nothing was created"
    assert list(tmp_path.iterdir()) == []


def test_a_reading_command_in_a_directory_that_does_not_exist_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only a missing file is answered as an empty database: a missing directory stays
    # the error every command gives (README, "Two commands").
    db = tmp_path / "typo" / "never.db"
    assert _exit_status(monkeypatch, "--db", str(db), "list", "--json") == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert "does not exist" in error["message"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("arguments", "status"),
    [(("search", "tea"), 0), (("recall", "tea"), 0), (("explain", "tea", "an-id"), 1)],
)
def test_a_query_on_a_missing_database_loads_no_embedding_model(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    arguments: tuple[str, ...],
    status: int,
) -> None:
    # Review of pass a67: the empty stand-in database made the embedder the settings name
    # (minilm: the model loaded, or first derived into the cache, seconds) to answer
    # "nothing" to a query on a mistyped --db.
    import recalld.embeddings

    made: list[str] = []
    real = recalld.embeddings.create_embedder

    def recorded(settings: Settings) -> Embedder | None:
        made.append(settings.embedder)
        return None if settings.embedder == "minilm" else real(settings)

    monkeypatch.setattr(recalld.embeddings, "create_embedder", recorded)
    db = tmp_path / "never.db"
    arguments = ("--db", str(db), *arguments, "--json")
    assert _exit_status(monkeypatch, *arguments, embedder="minilm") == status
    output = capsys.readouterr()
    assert output.err.splitlines()[0] == f"no database at {db}: nothing was created"
    if not status:
        assert json.loads(output.out) == []
    assert "minilm" not in made
    assert list(tmp_path.iterdir()) == []


def test_the_stand_in_database_is_removed_when_its_close_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review of pass a67: a service whose close raised left the temporary directory.
    from recalld.adapters._cli_support import _State

    state = _State(settings=Settings(db=tmp_path / "never.db", embedder="none"))
    service = state.memory(existing=True)
    assert state._scratch is not None
    scratch = Path(state._scratch.name)
    assert scratch.is_dir()

    def failing() -> None:
        raise OSError("close failed")

    monkeypatch.setattr(service, "close", failing)
    with pytest.raises(OSError, match="close failed"):
        state.close()
    assert not scratch.exists()
    type(service).close(service)
    assert "nothing was created" in capsys.readouterr().err


def test_status_on_a_missing_database_creates_nothing_and_reports_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Stop 67's leftover (adversarial pass c68): `status` created an empty database at a
    # mistyped --db to report an empty queue; README names only `stats` as creating one.
    db = tmp_path / "never.db"
    arguments = ("--db", str(db), "status", "--json")
    assert _exit_status(monkeypatch, *arguments, embedder="minilm") == 0
    output = capsys.readouterr()
    assert output.err.strip() == f"no database at {db}: nothing was created"
    status = json.loads(output.out)
    assert status["queue"] == {"queued": 0, "running": 0, "done": 0, "failed": 0}
    # The embedder the settings name, as on an existing database (none is loaded).
    assert status["embedder"].startswith("all-MiniLM-L6-v2")
    assert list(tmp_path.iterdir()) == []

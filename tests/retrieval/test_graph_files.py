"""Deleting the graph files of models a database no longer holds vectors of."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from recalld.retrieval.graph_files import graph_path, remove_graphs_of_other_models


def _saved(path: Path, model: str) -> Path:
    with path.open("wb") as handle:
        np.savez(handle, model=np.str_(model))
    return path


def test_old_graph_files_are_found_beside_a_database_named_with_glob_characters(
    tmp_path: Path,
) -> None:
    # "[1]" was read as a pattern: the database's own old file was never matched (so
    # never deleted), and "a1.db"'s was looked at instead.
    database = tmp_path / "notes[1].db"
    old = _saved(graph_path(database, "model-a"), "model-a")
    kept = _saved(graph_path(database, "model-b"), "model-b")
    other = _saved(graph_path(tmp_path / "notes1.db", "model-a"), "model-a")
    assert remove_graphs_of_other_models(database, "model-b") == [old]
    assert not old.exists()
    assert kept.exists()
    assert other.exists()

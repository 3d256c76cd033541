"""Where the vector graph of each model is saved beside the database, and clearing the
files of models whose vectors the database no longer holds.

A model switch re-embeds every memory and then drops the old model's vectors; the old
model's graph file (links and row map, about 270 bytes a memory: 270 MB at a million)
stayed beside the database for good. The worker that drops the vectors now deletes it.
"""

from __future__ import annotations

import glob
import logging
import re
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["graph_path", "model_slug", "remove_graphs_of_other_models"]

logger = logging.getLogger(__name__)

GRAPH_SUFFIX = ".graph.npz"


def model_slug(model: str) -> str:
    """``model`` as it appears in a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model)[:80]


def graph_path(prefix: Path | str, model: str) -> Path:
    """The graph file of ``model``'s vectors for the database at ``prefix``."""
    return Path(f"{prefix}-vectors-{model_slug(model)}{GRAPH_SUFFIX}")


def remove_graphs_of_other_models(prefix: Path, model: str) -> list[Path]:
    """Delete the graph files beside the database at ``prefix`` of every model but
    ``model`` (call once the database holds no other model's vector); returns them.

    A file counts only when the model it records names exactly its own path, so another
    database whose name starts alike (``<db>-vectors-x.db``) keeps its files, and one
    that cannot be read is left alone (whoever owns it rewrites it). The database's name
    is escaped in the pattern: ``notes[1].db`` was read as ``notes1.db``."""
    keep = graph_path(prefix, model)
    base = Path(f"{prefix}-vectors-")
    removed = []
    for candidate in base.parent.glob(f"{glob.escape(base.name)}*{GRAPH_SUFFIX}"):
        if candidate == keep:
            continue
        try:
            with np.load(candidate) as saved:
                recorded = str(saved["model"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            logger.debug("leaving the unreadable graph file %s: %s", candidate, error)
            continue
        if recorded == model or graph_path(prefix, recorded) != candidate:
            continue
        try:
            candidate.unlink(missing_ok=True)
        except OSError as error:
            logger.warning("could not delete the old model's graph file %s: %s", candidate, error)
            continue
        removed.append(candidate)
    return removed

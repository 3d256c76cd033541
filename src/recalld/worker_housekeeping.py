"""What an idle worker tidies (at most once a minute): the old model's vectors and vector
graphs once a model switch completed, done jobs past their retention, the vector log."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from recalld.retrieval.graph_files import remove_graphs_of_other_models
from recalld.store.base import Store

__all__ = ["DONE_JOB_RETENTION", "MAINTENANCE_INTERVAL_SECONDS", "tidy"]

logger = logging.getLogger(__name__)

DONE_JOB_RETENTION = timedelta(days=1)
MAINTENANCE_INTERVAL_SECONDS = 60.0


def tidy(store: Store, model: str | None, now: datetime) -> None:
    """Tidy ``store`` for a worker embedding with ``model`` (None: graph extraction only)."""
    semantic = store.semantic
    if model is not None and semantic.pending_jobs(model) == 0:
        dropped = semantic.drop_other_models(model)
        if dropped:
            logger.info("model switch to %s complete: dropped %d old vectors", model, dropped)
        # And the old models' graph files, useless without their vectors (also those a
        # switch completed by an earlier version left behind).
        location = store.index_location
        if location is not None:
            for removed in remove_graphs_of_other_models(location, model):
                logger.info("deleted the old model's vector graph %s", removed)
    semantic.purge_done_jobs(now - DONE_JOB_RETENTION)
    semantic.compact_vector_log()

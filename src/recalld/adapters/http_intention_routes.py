"""REST routes for prospective memory (issue 17): ``/v1/intentions``.

- ``POST /v1/intentions`` — an :class:`~recalld.intentions.IntentionRequest` →
  the stored :class:`~recalld.intentions.Intention` (201), every time given
  echoed as resolved (``resolved``: field, text, instant);
- ``GET /v1/intentions?state=active|done|cancelled|expired|all`` → ``{"intentions"}``;
- ``GET /v1/intentions/{id}`` → one; ``DELETE /v1/intentions/{id}`` cancels it
  (it never fires again; a reminder still queued is dropped) → the intention.

Reminders arrive through ``POST /v1/sense`` and ``GET /v1/recollections/pending``
as items with ``kind: "reminder"``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query

from recalld.adapters.http_dependencies import COMMON_ERRORS, ReadNamespace, Service, WriteNamespace
from recalld.adapters.http_models import StrictJSONRoute, error_responses
from recalld.intentions import Intention, IntentionList, IntentionRequest

__all__ = ["intentions_router"]

intentions_router = APIRouter(
    prefix="/v1/intentions",
    tags=["intentions"],
    route_class=StrictJSONRoute,
    responses=COMMON_ERRORS,
)

IntentionId = Annotated[str, Path(min_length=1, max_length=64)]
StateQuery = Annotated[
    Literal["active", "done", "cancelled", "expired", "all"],
    Query(description="which intentions to list (default: active)"),
]


@intentions_router.post("", response_model=Intention, status_code=201)
def remind(body: IntentionRequest, service: Service, namespace: WriteNamespace) -> Intention:
    """Remind of ``action`` when every given trigger holds (place, time, mention, signal, tag).

    Times are ISO 8601 or phrases ("tomorrow at 9") read in ``zone``; the reply
    echoes each as resolved. Bad input (no trigger, a radius outside (0, 50 km],
    a past time for ``once``, an unreadable phrase or recurrence) → 422 naming
    the field, and nothing is stored.
    """
    return service.intentions.remind_request(body, namespace=namespace)


@intentions_router.get("", response_model=IntentionList)
def list_intentions(
    service: Service, namespace: ReadNamespace, state: StateQuery = "active"
) -> IntentionList:
    """The namespace's intentions in ``state``, newest first."""
    return IntentionList(intentions=service.intentions(state=state, namespace=namespace))


@intentions_router.get("/{intention_id}", response_model=Intention, responses=error_responses(404))
def get_intention(
    intention_id: IntentionId, service: Service, namespace: ReadNamespace
) -> Intention:
    """One intention, in any state."""
    return service.intentions.get(intention_id, namespace=namespace)


@intentions_router.delete(
    "/{intention_id}", response_model=Intention, responses=error_responses(404)
)
def cancel_intention(
    intention_id: IntentionId, service: Service, namespace: WriteNamespace
) -> Intention:
    """Cancel an intention (its memory stays until forgotten through ``/v1/memories``)."""
    return service.cancel(intention_id, namespace=namespace)

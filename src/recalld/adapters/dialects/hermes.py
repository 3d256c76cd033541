"""The hermes dialect: the bounded core-memory ``memory`` tool (seed 003).

Exact schema: ``target`` (``memory`` | ``user``, required); the single-operation
fields ``action`` / ``content`` / ``new_text`` / ``old_text``; or ``operations``,
an array of ``{action, content?, new_text?, old_text?}`` objects (no other keys)
applied atomically with the limit checked on the final result. Answers are JSON:
``success``, a message, the entries and ``usage`` (current/limit chars); a full
target answers ``success: false`` with its current entries so the agent can
reissue one batch that frees room. Every other failure (a missing target, an
unknown action, an operation that matches nothing, an entry the screen blocks)
answers the same JSON with ``success: false``, the ``error`` naming the argument,
and the target's current entries. The seed's top-level schema is open (only its
operation items are closed), so unknown top-level arguments are ignored, as
there; unknown keys inside an operation are refused.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

from recalld import _validate as check
from recalld.adapters.dialects._core import CORE_PROMPT, CORE_RESOURCE
from recalld.adapters.dialects.base import Dialect, McpState, ToolSpec, state_of
from recalld.adapters.dialects.failures import ToolCall, ToolFailure, Wording
from recalld.core_memory import TARGETS, CoreMemoryFullError, requested_operations
from recalld.errors import RecalldError

__all__ = ["DIALECT"]

Action = Literal["add", "patch", "remove"]


# One operation of a batch (no docstring: it would be published in the item schema).
class Operation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action
    content: Annotated[str | None, Field(description="Needed by add and patch, as above.")] = None
    new_text: Annotated[str | None, Field(description="Same as content in a batch item.")] = None
    old_text: Annotated[str | None, Field(description="As old_text above.")] = None


def _answer(body: dict[str, Any], *, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=error,
    )


def memory(
    ctx: Context,
    target: Annotated[
        Literal["memory", "user"],
        Field(description="Which block: 'memory' for your own notes, 'user' for the user profile."),
    ],
    action: Annotated[
        Action | None,
        Field(description="Single-change form only: the one action. Leave out with 'operations'."),
    ] = None,
    content: Annotated[
        str | None,
        Field(
            description="For add: the new entry. For patch: the text that replaces old_text "
            "(the rest of that entry stays). Same as new_text."
        ),
    ] = None,
    new_text: Annotated[
        str | None, Field(description="Same as content; content is used when both are given.")
    ] = None,
    old_text: Annotated[
        str | None,
        Field(
            description="For patch and remove: text found in exactly one entry. patch replaces "
            "just this span; remove deletes that whole entry. Not used by add."
        ),
    ] = None,
    operations: Annotated[
        list[Operation] | None,
        Field(
            description="Batch form: several operations applied together, all or nothing, "
            "against the final size limit. Use it for more than one change, or to make room "
            "and add in one call. Each item is {action, content?, old_text?}."
        ),
    ] = None,
) -> CallToolResult:
    core = state_of(ctx).service.core
    batch = requested_operations(
        action,
        content,
        new_text,
        old_text,
        None if operations is None else [item.model_dump() for item in operations],
    )
    # The seed asks for content only on add and patch and forbids it nowhere: a model that
    # fills every field of a remove means the remove (the engine itself refuses the text).
    for item in batch:
        if isinstance(item, dict) and item.get("action") == "remove":
            item.update(content=None, new_text=None)
    result = core.apply(target, batch)
    return _answer(result.model_dump(exclude_none=True))


def _error(failure: ToolFailure, call: ToolCall) -> CallToolResult:
    """hermes' error shape: ``success: false``, the error naming the argument, and the
    target's current entries (with the would-be size when the batch did not fit)."""
    target = call.arguments.get("target")
    if target not in TARGETS:
        # A refused target is the caller's value: repeated cut, as every refused value is
        # (a 10,000-character one came back whole), and only when it is text.
        target = check.field_name(target) if isinstance(target, str) else None
    text = failure.text()
    if call.arguments.get("operations") is None:
        # The single-operation form (operations absent, or null as models send every
        # optional argument): name its fields as the caller gave them.
        text = text.removeprefix("operations[0].")
    body: dict[str, Any] = {"success": False, "target": target, "error": text}
    full = failure.error
    if isinstance(full, CoreMemoryFullError):
        body.update(
            error=full.message,
            entries=full.state.entries,
            usage=full.state.usage,
            would_be_chars=full.would_be,
        )
    elif isinstance(call.state, McpState) and target in TARGETS:
        try:
            state = call.state.service.core.state(str(target))
        except RecalldError:
            state = None
        if state is not None:
            body.update(entries=state.entries, usage=state.usage)
    return _answer(body, error=True)


DIALECT = Dialect(
    name="hermes",
    wording=Wording(shape=_error, closed=False),
    tools=(
        ToolSpec(
            "memory",
            memory,
            "Keep durable facts that must hold in every future session. This memory is put into "
            "every turn, so entries must be short and worth their cost.\n\n"
            "HOW: make all changes to one target in a single call with 'operations' (each item "
            "{action, content?, old_text?}). The batch is all-or-nothing and the size limit is "
            "checked only on the end result, so one call can remove or patch stale entries to "
            "make room and add new ones, even when the add alone would not fit. The reply gives "
            "current/limit chars and confirms the change; one call completes the update, do not "
            "repeat it. Use the single action/content/old_text fields only for one lone change.\n\n"
            "WHEN: only for facts that apply to every session whatever the task: who the user is, "
            "stable facts about the environment, standing conventions. What you learn while doing "
            "a task (procedures, pitfalls, preferences for that kind of work) belongs with that "
            "task's own notes or skills, where it loads only when relevant.\n\n"
            "IF FULL: the add is refused and the current entries are shown. Send one batch that "
            "removes or shortens stale entries and adds the new one.\n\n"
            "TARGETS: 'user' is who the user is (name, role, preferences, style); 'memory' is your "
            "notes (environment, conventions, tool quirks, lessons).\n\n"
            "SKIP: trivial or easily rediscovered facts, raw data, task progress, logs of finished "
            "work, temporary to-dos.",
            destructive=True,  # replace and remove change entries for good
        ),
    ),
    resources=(CORE_RESOURCE,),
    prompts=(CORE_PROMPT,),
)

"""The :class:`Intentions` component the service owns: remind, list, cancel, and firing.

Sensed intentions fire from :meth:`Intentions.sensed`, the hook the
:class:`~recalld.recollection.Recollector` calls after each ``sense``; time-only
intentions fire from :meth:`Intentions.run_due`, the step of the
:class:`~recalld.intentions.scheduler.Scheduler`. Both claim their firings in
one write transaction and queue reminders in the pending queue (``kind:
"reminder"``), which every consumer of recollections drains exactly once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Literal

from recalld import _validate as check
from recalld._text import shown
from recalld._time import Clock
from recalld.config import Settings
from recalld.conflicts import rerun_on_conflict
from recalld.errors import NotFoundError, ValidationError
from recalld.intentions.building import build, describe, recurrence_of, trigger_record
from recalld.intentions.evaluation import (
    Firing,
    Situation,
    Surfaced,
    decide,
    parse_triggers,
    reminder_draft,
    update_streaks,
)
from recalld.intentions.matching import (
    EntityMatcher,
    fold,
    legacy_tokens,
    lookup_term,
    tokens,
)
from recalld.intentions.model import (
    Intention,
    IntentionRequest,
    TimeTrigger,
    Trigger,
)
from recalld.intentions.scheduler import Scheduler
from recalld.intentions.timing import PhraseParser, parse_clock_time, parse_zone
from recalld.model import Memory, NewMemory, Receipt
from recalld.recollection.cue import Cue, Recollection, ReminderMatch
from recalld.store.base import Store, StoreTransaction
from recalld.store.intentions import IntentionRecord, IntentionRow, IntentionSession, Lookup
from recalld.writing import expired

__all__ = ["Intentions", "WriteMemory"]

logger = logging.getLogger(__name__)

WriteMemory = Callable[[StoreTransaction, NewMemory, str], tuple[Receipt, Memory]]
StateFilter = Literal["active", "done", "cancelled", "expired", "all"]
DUE_BATCH = 100
SURFACED_WORDS = 2_000


class Intentions:
    """Prospective memory over one database: "remind me when…", delivered once."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        write: WriteMemory,
        *,
        match_entities: EntityMatcher | None = None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self._write = write
        self._parser = PhraseParser(
            parse_clock_time(settings.reminder_default_time, "RECALLD_REMINDER_DEFAULT_TIME")
        )
        self.match_entities = match_entities
        """(sensed text, namespace) -> entity names; the knowledge graph plugs in here."""
        self._unknown_zones: dict[int, datetime | None] = {}
        self._unknown_zones_lock = threading.Lock()
        """Recurring intentions (by seq) on a clock this machine's tzdata does not know,
        and when they end (expiry, TTL), if ever: they are not fired here, and the
        scheduler looks past them until then, so they block no other."""
        self._reported_zones: set[int] = set()
        """Intentions whose unknown zone was logged (once per process)."""
        self.scheduler: Scheduler | None = None
        if settings.scheduler_thread:
            self.start_scheduler()

    def _namespace(self, namespace: str | None) -> str:
        return check.namespace(self._settings.namespace if namespace is None else namespace)

    # -- writing -------------------------------------------------------------

    def remind(
        self,
        action: str,
        *,
        place: dict[str, Any] | None = None,
        radius_m: float | None = None,
        at: str | datetime | None = None,
        until: str | datetime | None = None,
        every: str | None = None,
        window_minutes: float | None = None,
        zone: str | None = None,
        mention: Sequence[str] = (),
        signals: Sequence[str | dict[str, Any]] = (),
        tags: Sequence[str] = (),
        expires: str | datetime | None = None,
        repeat: Literal["once", "every_time"] = "once",
        min_interval_seconds: float | None = None,
        namespace: str | None = None,
    ) -> Intention:
        """Store an intention: remind of ``action`` when all the given triggers hold.

        Triggers: ``place`` (``{"lat", "lon"}`` or ``{"geohash"}``) within
        ``radius_m`` (default 150 m, at most 50 km); a time: ``at`` (an instant;
        ISO 8601 or a phrase such as "tomorrow at 9"), ``at`` + ``until`` (a
        window), or ``every`` (daily, weekdays, weekly, monthly or an RRULE) from
        ``at`` on, in ``zone``; ``mention`` (words or names heard); ``signals``
        (``"heart_rate>150"`` or ``{"signal", "above"|"below", "readings"}``);
        ``tags``. Returns the intention with every time as it was resolved.
        """
        request = check.parse_model(
            IntentionRequest,
            {
                "action": action,
                "place": place,
                "radius_m": radius_m,
                "at": at.isoformat() if isinstance(at, datetime) else at,
                "until": until.isoformat() if isinstance(until, datetime) else until,
                "every": every,
                "window_minutes": window_minutes,
                "zone": zone,
                "mention": check.listed(mention, "mention"),
                "signals": check.listed(signals, "signals"),
                "tags": check.listed(tags, "tags"),
                "expires": expires.isoformat() if isinstance(expires, datetime) else expires,
                "repeat": repeat,
                "min_interval_seconds": min_interval_seconds,
            },
        )
        return self.remind_request(request, namespace=namespace)

    def remind_request(
        self, request: IntentionRequest, *, namespace: str | None = None
    ) -> Intention:
        """:meth:`remind` from an :class:`IntentionRequest` (the REST body)."""
        scope_namespace = self._namespace(namespace)
        now = self._clock()
        built = build(request, self._settings, self._parser, now)
        draft = NewMemory(content=request.action, kind="intention")
        record = IntentionRecord(
            namespace=scope_namespace,
            repeat=request.repeat,
            min_interval_seconds=built.min_interval_seconds,
            zone=built.zone,
            scheduled=built.scheduled,
            triggers=[trigger_record(trigger) for trigger in built.triggers],
            created_at=now,
            expires_at=built.expires_at,
            next_due=built.next_due,
        )

        def write() -> Memory:
            with self._store.transaction() as tx:
                _, memory = self._write(tx, draft, scope_namespace)
                tx.save_intention(memory.seq, record)
            return memory

        # A deadlock's victim on PostgreSQL is run again whole, as a remember is (review of
        # pass a68): it was a 503 the same call a moment later got through.
        memory = rerun_on_conflict(write, what="remind")
        if self.scheduler is not None and built.scheduled:
            self.scheduler.wake()
        stored = self._store.intentions.get(scope_namespace, memory.id, now=now)
        assert stored is not None  # just written in this transaction
        return self._intention(stored).model_copy(update={"resolved": built.resolved})

    # -- reading ---------------------------------------------------------------

    def __call__(
        self, *, state: StateFilter = "active", namespace: str | None = None
    ) -> list[Intention]:
        """The namespace's intentions in ``state`` (``all`` for every state), newest first.

        States are as of the clock: one past its ``expires`` is ``expired`` from then on.
        """
        states = None if state == "all" else [state]
        if state not in ("active", "done", "cancelled", "expired", "all"):
            raise ValidationError(
                "state", f"must be active, done, cancelled, expired or all, got {state!r}"
            )
        rows = self._store.intentions.select(self._namespace(namespace), states, now=self._clock())
        return [self._intention(row) for row in rows]

    def get(self, intention_id: str, *, namespace: str | None = None) -> Intention:
        """One intention by id (any state); :class:`NotFoundError` when unknown."""
        scope_namespace = self._namespace(namespace)
        check.lookup(intention_id, "id")
        row = self._store.intentions.get(scope_namespace, intention_id, now=self._clock())
        if row is None:
            raise NotFoundError(
                f"no intention with id {shown(intention_id)} in {scope_namespace!r}"
            )
        return self._intention(row)

    def cancel(self, intention_id: str, *, namespace: str | None = None) -> Intention:
        """Cancel an intention: it never fires again, and a reminder still queued is dropped.

        The memory stays (listed with state ``cancelled``); ``forget`` removes it.
        """
        scope_namespace = self._namespace(namespace)
        check.lookup(intention_id, "id")
        row = self._store.intentions.cancel(scope_namespace, intention_id, self._clock())
        if row is None:
            raise NotFoundError(
                f"no intention with id {shown(intention_id)} in {scope_namespace!r}"
            )
        return self._intention(row)

    def counts(self, *, namespace: str | None = None) -> dict[str, int]:
        """How many intentions the namespace has in each state (as of the clock)."""
        return self._store.intentions.counts(self._namespace(namespace), now=self._clock())

    def _intention(self, row: IntentionRow) -> Intention:
        try:
            zone = parse_zone(row.zone)
        except ValidationError:
            # A zone this machine's tzdata does not know (the scheduler reports it): the
            # intention is still listed, and can be cancelled; ``zone`` names it, and its
            # times are given in UTC, the instants they are.
            zone = UTC
        return Intention(
            id=row.memory.id,
            seq=row.seq,
            namespace=row.memory.namespace,
            action=row.memory.content,
            state=row.state,  # type: ignore[arg-type]
            repeat=row.repeat,  # type: ignore[arg-type]
            min_interval_seconds=row.min_interval_seconds,
            triggers=parse_triggers(row),
            zone=row.zone,
            expires_at=None if row.expires_at is None else row.expires_at.astimezone(zone),
            next_due=None if row.next_due is None else row.next_due.astimezone(zone),
            last_fired_at=row.last_fired_at,
            fire_count=row.fire_count,
            created_at=row.created_at,
        )

    # -- firing from sense -------------------------------------------------------

    def sensed(
        self, cue: Cue, namespace: str, now: datetime, recollections: list[Recollection]
    ) -> list[Recollection]:
        """Fire the intentions whose triggers all hold in the sensed context (the sense hook).

        Finds candidates by index (mention words, tags, signal names, a box
        around the place); only when there are any does it open a write
        transaction, which re-reads them, updates signal streaks and claims
        each firing, so concurrent senses never fire one intention twice.
        """
        names = (
            list(self.match_entities(cue.text, namespace))
            if self.match_entities is not None and cue.text
            else []
        )
        situation = self._situation(cue, now, recollections, names)
        lookup = Lookup(
            terms={
                "mention": sorted(
                    set(situation.words)
                    | {word for item in situation.surfaced for word in item.words}
                    | {lookup_term(name.split(" ")) for name in situation.entities}
                    | _legacy_terms(cue.text, recollections, names)
                ),
                "tag": sorted(
                    set(situation.tags) | {tag for item in situation.surfaced for tag in item.tags}
                ),
                "signal": sorted(situation.readings),
            },
            place=None if cue.place is None else (cue.place.lat, cue.place.lon),
        )
        seqs = self._store.intentions.candidates(namespace, lookup)
        if not seqs:
            return []

        def step(session: IntentionSession) -> list[Recollection]:
            fired = []
            for row in session.load(seqs):
                # Past its own expiry, or its memory's TTL (gone for every read, as the
                # memory is, until the purge deletes both): it never fires again.
                if expired(row.memory, now) or (
                    row.expires_at is not None and now >= row.expires_at
                ):
                    session.set_state(row.seq, "expired", now)
                    continue
                triggers = parse_triggers(row)
                if not self._expandable(row, _recurrence_zones(triggers)):
                    continue  # a recurrence on a clock this machine cannot read
                streaks = update_streaks(row, triggers, situation, self._settings)
                firing = decide(row, triggers, streaks, situation, self._settings)
                if firing is not None:
                    # A firing consumes the streaks: sustained again means N new readings.
                    streaks = {position: None for position in streaks}
                    session.record_firing(row.seq, now, firing.state, row.next_due)
                    fired.append(self._queue(session, firing, now))
                for position, streak in streaks.items():
                    session.set_streak(row.seq, position, streak)
            return fired

        return self._store.intentions.session(step)

    def _situation(
        self, cue: Cue, now: datetime, recollections: list[Recollection], names: Sequence[str]
    ) -> Situation:
        """What sense perceived; ``names``: the entities the hook recognised in its text."""
        entities = frozenset(" ".join(tokens(name)) for name in names)
        surfaced = [
            Surfaced(
                words=tokens(f"{item.memory.title or ''} {item.memory.content}")[:SURFACED_WORDS],
                tags=frozenset(item.memory.tags),
            )
            for item in recollections
        ]
        return Situation(
            now=now,
            place=cue.place,
            words=tokens(cue.text or ""),
            tags=frozenset(cue.tags),
            readings=dict(cue.biometrics),
            surfaced=surfaced,
            entities=frozenset(fold(name) for name in entities),
        )

    def _queue(self, session: IntentionSession, firing: Firing, now: datetime) -> Recollection:
        draft, reminder, line = reminder_draft(firing, now)
        session.queue(draft, now)
        return Recollection(
            memory=firing.row.memory,
            score=draft.score,
            channels=draft.channels,
            prompt_line=line,
            fired_at=now,
            kind="reminder",
            reminder=reminder,
        )

    # -- firing from the clock -------------------------------------------------

    def run_due(self, now: datetime | None = None) -> list[Recollection]:
        """Fire every time-only intention due at ``now`` (default: the clock), in every
        namespace; one transaction per batch claims them, so no firing is delivered twice.

        A recurrence then moves to its next occurrence after ``now`` (occurrences
        missed while no process ran fire once, late, with their ``due_at``).
        """
        if now is not None and (not isinstance(now, datetime) or now.utcoffset() is None):
            # A naive time would be read on this machine's clock; text would fail later.
            raise ValidationError(
                "now", f"give a datetime with its offset (tzinfo), got {shown(repr(now))}"
            )
        moment = self._clock() if now is None else now
        fired: list[Recollection] = []
        while True:
            batch, read = self._store.intentions.session(
                lambda session: self._fire_due(session, moment)
            )
            fired.extend(batch)
            if read < DUE_BATCH:
                return fired

    def _fire_due(self, session: IntentionSession, now: datetime) -> tuple[list[Recollection], int]:
        """Fire a batch of what is due; the reminders, and how many rows were read."""
        fired = []
        rows = session.due(now, DUE_BATCH, skip=self._unfireable(now))
        for row in rows:
            # Decided before any zone is read: an end is an instant, on every clock.
            if expired(row.memory, now) or (row.expires_at is not None and now >= row.expires_at):
                session.set_state(row.seq, "expired", now)
                continue
            trigger = parse_triggers(row)[0]
            assert isinstance(trigger, TimeTrigger)  # scheduled intentions have only a time
            if trigger.until is not None and now >= trigger.until:
                session.set_state(row.seq, "expired", now)  # the whole window was missed
                continue
            if not self._expandable(row, _recurrence_zones([trigger])):
                continue  # left active and unfired; the next batch looks past it
            zone = self._shown_zone(row)
            due = row.next_due
            recurrence = recurrence_of(trigger)
            next_due = None
            if recurrence is not None and due is not None:
                next_due = recurrence.next_after(max(now, due))
            elif row.repeat == "every_time" and trigger.until is not None:
                # A window fires again every min_interval while it lasts (counted from
                # this firing: a window missed while no process ran fires once, late).
                gap = max(row.min_interval_seconds, self._settings.intention_min_recurrence_seconds)
                # Compared as seconds first: an interval past the window's end (1e12 s is
                # accepted) overflowed the datetime, and the OverflowError rolled back
                # every reminder due in the same run, again on each poll.
                if gap < (trigger.until - now).total_seconds():
                    next_due = now + timedelta(seconds=gap)
            if next_due is not None and row.expires_at is not None:
                next_due = None if next_due >= row.expires_at else next_due
            state = "active" if next_due is not None else "done"
            when = describe(due) if due is None else describe(due.astimezone(zone))
            detail = f"it is due at {when}" + (f" ({trigger.every})" if trigger.every else "")
            firing = Firing(
                row=row,
                matched=[ReminderMatch(trigger="time", detail=detail)],
                state=state,
                next_due=next_due,
                due_at=None if due is None else due.astimezone(zone),
            )
            session.record_firing(row.seq, now, state, next_due)
            fired.append(self._queue(session, firing, now))
        return fired, len(rows)

    def next_due(self) -> datetime | None:
        """The earliest time any scheduled intention this process can fire comes due, or
        one it cannot fire (an unknown zone) ends, to be expired (every namespace)."""
        now = self._clock()
        due = self._store.intentions.next_due(skip=self._unfireable(now))
        with self._unknown_zones_lock:
            ends = [end for end in self._unknown_zones.values() if end is not None and end > now]
        return min([moment for moment in (due, *ends) if moment is not None], default=None)

    def _unfireable(self, now: datetime) -> list[int]:
        """The intentions the scheduler looks past at ``now``: those it cannot expand
        (:meth:`_expandable`), until they end and are to be expired."""
        with self._unknown_zones_lock:
            return [seq for seq, end in self._unknown_zones.items() if end is None or now < end]

    def _expandable(self, row: IntentionRow, names: Sequence[str]) -> bool:
        """Whether this machine's tzdata knows every zone in ``names`` (those ``row``'s
        recurrences are expanded on). A recurrence on a zone it does not know (a database
        written where tzdata knew a newer one) cannot fire here: logged once per process
        with the intention's id and the zone, and looked past until the intention ends."""
        for name in names:
            try:
                parse_zone(name)
            except ValidationError:
                with self._unknown_zones_lock:
                    self._unknown_zones[row.seq] = _end_of(row)
                self._report_zone(
                    row,
                    name,
                    "its recurrence cannot be expanded here; it stays active, blocks no"
                    " other, and expires when it ends",
                )
                return False
        return True

    def _shown_zone(self, row: IntentionRow) -> tzinfo:
        """``row``'s zone, to show its times in; UTC when this machine's tzdata does not
        know it (logged once per process): the instants are the same."""
        try:
            return parse_zone(row.zone)
        except ValidationError:
            self._report_zone(row, row.zone, "it fires at its instant, shown in UTC")
            return UTC

    def _report_zone(self, row: IntentionRow, name: str, consequence: str) -> None:
        with self._unknown_zones_lock:
            first = row.seq not in self._reported_zones
            self._reported_zones.add(row.seq)
        if first:
            logger.warning(
                "intention %s (namespace %r): its time zone %r is unknown to this machine's"
                " tzdata (update the tzdata package and restart, or cancel it); %s",
                row.memory.id,
                row.memory.namespace,
                name,
                consequence,
            )

    # -- the scheduler thread ---------------------------------------------------

    def start_scheduler(
        self, *, on_fired: Callable[[list[Recollection]], None] | None = None
    ) -> Scheduler:
        """Start this process's scheduler thread (idempotent); ``on_fired`` hears each
        batch of reminders it fires."""
        if self.scheduler is None:
            self.scheduler = Scheduler(
                lambda now: self.run_due(now),
                self.next_due,
                self._settings,
                self._clock,
                on_fired=on_fired,
            )
            self.scheduler.start()
        return self.scheduler

    def close(self) -> None:
        """Stop the scheduler thread, if one runs."""
        if self.scheduler is not None:
            self.scheduler.stop()
            self.scheduler = None


def _end_of(row: IntentionRow) -> datetime | None:
    """When ``row`` ends, whatever its zone: the earliest of its expiry, its memory's TTL
    and its time windows' ``until``; None when it never does."""
    ends = [row.expires_at, row.memory.expires_at]
    ends.extend(
        trigger.until for trigger in parse_triggers(row) if isinstance(trigger, TimeTrigger)
    )
    return min([end for end in ends if end is not None], default=None)


def _legacy_terms(
    text: str | None, recollections: Sequence[Recollection], names: Sequence[str]
) -> set[str]:
    """The words an older version indexed a mention by, in the sensed text, what surfaced
    with it and the names of the entities recognised in it: a mention stored then ("राम"
    by a part of it, "C++" by "c") is still a candidate, and is then decided on today's
    words."""
    terms = set(legacy_tokens(text or ""))
    terms.update(lookup_term(words) for words in map(legacy_tokens, names) if words)
    for item in recollections:
        surfaced = f"{item.memory.title or ''} {item.memory.content}"
        terms.update(legacy_tokens(surfaced)[:SURFACED_WORDS])
    return terms


def _recurrence_zones(triggers: Sequence[Trigger]) -> list[str]:
    """The zones whose wall clocks the time triggers' recurrences are expanded on."""
    return [
        trigger.zone
        for trigger in triggers
        if isinstance(trigger, TimeTrigger) and trigger.rrule is not None
    ]

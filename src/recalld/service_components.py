"""A service's components, built on first use, once, and never after it is closed.

``functools.cached_property`` built them before: on Python 3.12 and later it has
no lock, so two threads of a pool reaching ``service.indexing`` at once built two
(two retrievers, two sets of helper threads, one of them never closed); and it
built one after :meth:`~recalld.service.MemoryService.close` too, whose threads
(a recall's query helper, the scheduler) then ran on with nothing left to stop
them. :class:`Component` builds under the service's own lock, which ``close``
takes to mark the service closed: a component is built before (and ``close``
stops it) or is refused with ``StorageError`` after.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, overload

__all__ = ["Component", "Owner"]

Built = TypeVar("Built")


class Owner(Protocol):
    """What a service offers its components: the lock they are built under, and the check
    that it is still open (raising :class:`~recalld.errors.StorageError` when it is not)."""

    _building: threading.RLock

    def _require_open(self) -> None: ...


class Component(Generic[Built]):
    """A method turned into an attribute built on first use (see the module docstring).

    The lock is re-entrant: one component's build may use another (recollections use
    the intentions). Once built, the value sits in the instance's ``__dict__``, so a
    read takes no lock and ``name in service.__dict__`` says whether it was built."""

    def __init__(self, build: Callable[[Any], Built]) -> None:
        self._build = build
        self._name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Component[Built]: ...

    @overload
    def __get__(self, instance: Owner, owner: type | None = None) -> Built: ...

    def __get__(self, instance: Owner | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        built = instance.__dict__
        if self._name in built:
            return built[self._name]
        with instance._building:
            if self._name not in built:  # another thread may have built it meanwhile
                instance._require_open()
                built[self._name] = self._build(instance)
            return built[self._name]

"""The error of settings that do not validate (split from :mod:`recalld.config`, which
re-exports it)."""

from __future__ import annotations

import re
from typing import Any

import pydantic
from pydantic_settings import SettingsError

from recalld.errors import ValidationError

__all__ = ["HIDDEN", "SECRET_FIELDS", "InvalidSettingsError", "Problem"]

# One problem of settings that do not validate: where, what, the value given.
Problem = tuple[tuple[str, ...], str, Any]

# Settings whose value may hold a password or key: an error about them never repeats it.
SECRET_FIELDS = frozenset({"db", "embedder_url", "embedder_api_key"})
# What a problem holds instead of the value given to one of them (as a SecretStr shows).
HIDDEN = "**********"


class InvalidSettingsError(ValidationError, ValueError):
    """Settings that do not validate: ``field`` and ``message`` are the first problem's,
    ``problems`` each one's location, message and the value given (a value that is not
    a plain scalar as its ``repr``, so that the error pickles whole; the value of a
    setting that may hold a password or key, :data:`SECRET_FIELDS`, as :data:`HIDDEN`).

    Also a ``ValueError``, as pydantic's error it replaces is: code that caught
    ``ValueError`` around ``Settings(...)`` still catches it (stop 67)."""

    def __init__(self, field: str, message: str, problems: list[Problem]) -> None:
        super().__init__(field, message)
        # The error is pickled, logged and kept: Settings(embedder_api_key=...) refused
        # held the key itself, and a refused postgresql:// URL its password (review of
        # pass a67).
        self.problems = [
            (location, problem, HIDDEN if location[:1] and location[0] in SECRET_FIELDS else given)
            for location, problem, given in problems
        ]

    @classmethod
    def of(cls, error: pydantic.ValidationError) -> InvalidSettingsError:
        """pydantic's error for the settings, as recalld's: under ``RecalldError``, as
        every error recalld raises (pydantic's escaped ``Settings(...)`` built in code)."""
        problems: list[Problem] = []
        for problem in error.errors(include_url=False):
            given = problem.get("input")
            plain = given is None or isinstance(given, str | int | float | bool)
            problems.append(
                (
                    tuple(str(part) for part in problem["loc"]),
                    str(problem["msg"]).removeprefix("Value error, "),
                    given if plain else repr(given),
                )
            )
        location, message, _ = problems[0]
        return cls(location[0] if location else "settings", message, problems)

    @classmethod
    def unreadable(cls, error: SettingsError) -> InvalidSettingsError:
        """pydantic-settings' error for a variable it could not read (a list-valued one is
        read as JSON), which names only the field, as recalld's (no ``problems``: the
        value is not known); it escaped ``Settings()`` as a bare ``ValueError``."""
        found = re.search(r'field "([^"]+)"', str(error))
        if found is None:
            return cls("settings", str(error), [])
        return cls(found.group(1), f"is not valid JSON ({error.__cause__})", [])

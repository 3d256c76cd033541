"""The error of settings that do not validate (split from :mod:`recalld.config`, which
re-exports it)."""

from __future__ import annotations

import re
from typing import Any

import pydantic
from pydantic_settings import SettingsError

from recalld.errors import ValidationError

__all__ = ["InvalidSettingsError", "Problem"]

# One problem of settings that do not validate: where, what, the value given.
Problem = tuple[tuple[str, ...], str, Any]


class InvalidSettingsError(ValidationError):
    """Settings that do not validate: ``field`` and ``message`` are the first problem's,
    ``problems`` each one's location, message and the value given (a value that is not
    a plain scalar as its ``repr``, so that the error pickles whole)."""

    def __init__(self, field: str, message: str, problems: list[Problem]) -> None:
        super().__init__(field, message)
        self.problems = problems

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

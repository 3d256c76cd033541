"""Database locations: a file path (SQLite) or a ``postgresql://`` URL, and printing them safely.

A URL may carry a password (``postgresql://user:secret@host/db``); every
message, log line and banner shows :func:`display_location` instead, which
replaces it with ``***``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = [
    "CONNINFO_REFUSED",
    "POSTGRES_SCHEMES",
    "display_location",
    "is_conninfo",
    "is_postgres_url",
    "redact_url",
    "url_secrets",
    "without_location",
]

POSTGRES_SCHEMES = ("postgresql", "postgres")
_SCHEME = re.compile(r"^(postgresql|postgres)://", re.IGNORECASE)
# key=value connection parameters that hold a secret (in a URL's query string).
_SECRET_PARAMETER = re.compile(r"(?i)(password|sslpassword)=[^&]*")
_SECRET_VALUE = re.compile(r"(?i)(?:password|sslpassword)=([^&]*)")
# Characters that end a URL's authority for urlsplit (and "@", which ends the userinfo).
_DELIMITERS = "@/?#"
# A libpq keyword/value connection string ("host=db port=5432 user=app password=…"): the
# form psql, psycopg and DATABASE settings of many tools take, so pasted as a database.
_CONNINFO = re.compile(
    r"^\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode"
    r"|connect_timeout|options|application_name|target_session_attrs)\s*=",
    re.IGNORECASE,
)


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(value, str) and bool(_SCHEME.match(value.strip()))


# A PostgreSQL location in a message, and the word before it ("the database at …").
_URL = r"postgres(?:ql)?://[^\s()]+?(?=[:,;.]?(?:[\s()]|$))"
_LOCATION_AFTER_WORD = re.compile(r"\s(?:at|of|in|to)\s" + _URL, re.IGNORECASE)
_LOCATION = re.compile(_URL, re.IGNORECASE)


def without_location(message: str) -> str:
    """``message`` without the PostgreSQL locations it names ("the database at
    postgresql://user:***@host/db is read-only" → "the database is read-only"): for
    clients that are told what failed, not where the database is."""
    return _LOCATION.sub("the database", _LOCATION_AFTER_WORD.sub("", message))


# Why a key=value connection string is refused, after the field's name. The value is not
# repeated: it may hold a password.
CONNINFO_REFUSED = (
    "is a key=value connection string (host=..., dbname=...), which recalld does"
    " not read as a database: give a postgresql:// URL"
    " (postgresql://user:password@host:port/dbname), or a file path (a SQLite file whose"
    " name begins so is given with its directory: ./user=me.db)"
)


def is_conninfo(value: object) -> bool:
    """Whether ``value`` is a libpq ``key=value`` connection string, not a file name."""
    return isinstance(value, str) and bool(_CONNINFO.match(value))


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (in the authority and the query)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://***"
    netloc = parts.netloc
    if "@" in netloc:
        credentials, _, host = netloc.rpartition("@")
        user, separator, _password = credentials.partition(":")
        netloc = f"{user}:***@{host}" if separator else f"{user}@{host}"
    query = _SECRET_PARAMETER.sub(lambda match: f"{match.group(1)}=***", parts.query)
    shown = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    # A password holding an unencoded "/", "?", "#" or "@" ends the authority early for
    # urlsplit (libpq reads it whole: "bob:se?cret@host" connects), so the netloc above
    # did not hold it, and "postgresql://bob:p/ss@host/db" was shown as it is.
    for secret in url_secrets(url):
        if any(character in secret for character in _DELIMITERS):
            shown = shown.replace(secret, "***")
    return shown


def display_location(location: str | Path) -> str:
    """How to show a database location to a person: a path as it is, a URL redacted."""
    if is_postgres_url(location):
        return redact_url(str(location))
    return os.fspath(location)


def url_secrets(url: str) -> list[str]:
    """The secrets written in ``url`` (the authority's password, ``password=`` and
    ``sslpassword=`` values), as written and percent-decoded, longest first; read from
    the text itself, so a URL no parser accepts still has its password found (a driver's
    error about such a URL quotes the bad part, which may be the password).

    A password with an unencoded ``@``, ``/``, ``?`` or ``#`` is read every way a parser
    may read it: up to the first ``@`` (libpq), the last ``@`` of the authority
    (urlsplit), else of everything before the query (``bob:p/ss@host``); and after an
    inner ``@`` (libpq takes ``bob:p@ss@host`` for password ``p`` at host ``ss@host``,
    and says that host)."""
    rest = _SCHEME.sub("", url.strip(), count=1)
    found = list(_SECRET_VALUE.findall(rest))
    libpq = re.match(r"([^@/]*)@", rest)  # libpq's credentials: up to an "@" before any "/"
    candidates = [libpq.group(1)] if libpq else []
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        candidates.append(authority.rpartition("@")[0])
    elif not candidates and "@" in rest.split("?", 1)[0]:
        candidates.append(rest.split("?", 1)[0].rpartition("@")[0])
    for credentials in candidates:
        password = credentials.partition(":")[2]
        found.append(password)
        found.extend(f"{piece}@" for piece in password.split("@")[1:] if piece)
    secrets = {value for raw in found for value in (raw, unquote(raw)) if value}
    return sorted(secrets, key=len, reverse=True)

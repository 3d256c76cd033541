"""The store package has no import cycles, and its protocol modules import no implementation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import recalld.store

STORE_DIRECTORY = Path(recalld.store.__file__).parent
MODULES = sorted(
    f"recalld.store.{path.stem}" for path in STORE_DIRECTORY.glob("*.py") if path.stem != "__init__"
)
PROTOCOL_MODULES = [
    "recalld.store.base",
    "recalld.store.context",
    "recalld.store.core",
    "recalld.store.graph",
    "recalld.store.intentions",
    "recalld.store.semantic",
]
IMPLEMENTATION_PREFIXES = ("recalld.store.sqlite", "recalld.store.postgres", "apsw", "psycopg")


def _imported_after(module: str) -> list[str]:
    """The modules loaded by importing ``module`` alone in a fresh interpreter."""
    code = (
        "import importlib, json, sys; importlib.import_module(sys.argv[1]);"
        " print(json.dumps(sorted(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, module], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"importing {module} alone failed:\n{result.stderr}"
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_store_modules_listed_include_both_stores() -> None:
    assert "recalld.store.sqlite" in MODULES
    assert "recalld.store.base" in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_store_module_imports_alone(module: str) -> None:
    assert module in _imported_after(module)


@pytest.mark.parametrize("module", PROTOCOL_MODULES)
def test_store_protocol_module_imports_no_implementation(module: str) -> None:
    loaded = _imported_after(module)
    offenders = [name for name in loaded if name.startswith(IMPLEMENTATION_PREFIXES)]
    assert offenders == []

"""The JSON text recalld gives PostgreSQL's jsonb (:mod:`recalld.store.postgres_json`)."""

from __future__ import annotations

import json

import numpy as np

from recalld.store.postgres_json import dumps


def test_a_large_float_is_written_out_with_a_fraction_and_reads_back_the_same() -> None:
    value = {"big": 1e20, "small": 1e-07, "count": 10**20, "list": [1.7976931348623157e308]}
    text = dumps(value)
    assert "100000000000000000000.0" in text
    assert json.loads(text) == value
    assert isinstance(json.loads(text)["big"], float)


def test_numpy_floats_are_written_as_the_floats_they_are() -> None:
    # repr(np.float64(1e20)) is "np.float64(1e+20)": not JSON, and not a number to read.
    for value in ({"a": np.float64(1e20)}, {"a": np.float64(0.5), "b": 1e20}):
        text = dumps(value)
        assert json.loads(text) == {key: float(item) for key, item in value.items()}

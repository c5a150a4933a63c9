"""Atomic writes and override parsing (property-based)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hmsim.results import write_csv, write_json
from hmsim.scenario import parse_overrides, toml_value


def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path):
    target = tmp_path / "results.csv"
    write_csv(target, pd.DataFrame({"a": [1]}))

    class Boom(pd.DataFrame):
        def to_csv(self, *a, **k):
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_csv(target, Boom({"a": [2]}))
    assert pd.read_csv(target).a.tolist() == [1]
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]


def test_json_has_no_nan(tmp_path: Path):
    write_json(tmp_path / "s.json", {"x": float("nan"), "y": [float("inf"), 1.0]})
    assert (tmp_path / "s.json").read_text().count("null") == 2


json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64),
    st.floats(),  # NaN and infinities too
    st.text(max_size=8),
)
json_values = st.recursive(
    json_leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.one_of(st.text(max_size=4), st.booleans(), st.none(), st.integers()), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values, st.booleans())
def test_json_is_the_cleaned_data_whichever_encoder_writes_it(tmp_path_factory, v, compact: bool):
    """Data with nothing to clean takes the encoder's fast path: the file must be what the
    cleaning path writes, indented or on one line, and read back as the cleaned data."""
    import json

    from hmsim.results import _clean

    path = tmp_path_factory.mktemp("j") / "s.json"
    write_json(path, v, compact=compact)
    text = path.read_text()
    assert text == json.dumps(_clean(v), indent=None if compact else 2) + "\n"
    assert json.loads(text) == _clean(v)
    assert (text.count("\n") == 1) or not compact


values = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=20),
    st.lists(st.integers(min_value=-1000, max_value=1000), max_size=5),
)


@given(values)
def test_override_values_round_trip_through_toml(v):
    assert tomllib.loads(f"v = {toml_value(v)}")["v"] == v


@given(st.from_regex(r"[a-z_]{1,8}(\.[a-z_]{1,8}){0,3}", fullmatch=True), st.text(max_size=10))
def test_cli_overrides_split_on_first_equals(key, value):
    assert parse_overrides([f"{key}={value}"]) == [(key, value.strip())]

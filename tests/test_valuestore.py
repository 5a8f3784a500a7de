"""The sweep's value store: exact round trips without pickle, and nothing outside tcpmodels is ever imported."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.sim.run import SimResult
from tcpmodels.sweep.valuestore import ValueStoreError, dump_value, load_value


def test_round_trip_of_plain_data_tables_arrays_and_a_tcpmodels_dataclass(tmp_path):
    flows = pd.DataFrame({"flow_index": [0, 1], "rate_bps": [1.5e6, np.nan]}, index=pd.Index([3, 4], name="k"))
    result = SimResult(record={"duration_s": 2.0, "seed": 1}, flows=flows, apps=flows.head(1), bins=flows,
                       queues=flows.iloc[0:0], cwnd=None, out_dir="/x/out")
    value = {"ok": True, "n": 3, "x": float("nan"), "inf": float("-inf"), "t": (1, "a"), "p": Path("/a/b"),
             "arr": np.arange(6, dtype=np.int32).reshape(2, 3), "f32": np.float32(0.5), 7: "int key",
             "series": pd.Series([1.0, 2.0], index=["a", "b"], name="s"), "unnamed": pd.Series([1, 2]),
             "sim": result, "nested": [{"__type__": "not a tag, just data"}]}
    dump_value(value, tmp_path / "v")
    back = load_value(tmp_path / "v")
    assert back["ok"] is True and back["n"] == 3 and np.isnan(back["x"]) and back["inf"] == float("-inf")
    assert back["t"] == (1, "a") and back["p"] == Path("/a/b") and back[7] == "int key"
    np.testing.assert_array_equal(back["arr"], value["arr"])
    assert back["arr"].dtype == np.int32 and back["f32"] == np.float32(0.5) and type(back["f32"]) is np.float32
    pd.testing.assert_series_equal(back["series"], value["series"])
    pd.testing.assert_series_equal(back["unnamed"], value["unnamed"])
    assert isinstance(back["sim"], SimResult) and back["sim"].cwnd is None and back["sim"].record == result.record
    pd.testing.assert_frame_equal(back["sim"].flows, flows)
    assert back["nested"] == value["nested"]
    assert not list(tmp_path.rglob("*.pkl"))


def test_types_that_would_need_pickle_are_refused_naming_the_part(tmp_path):
    @dataclasses.dataclass
    class Outside:
        x: int = 1

    with pytest.raises(ValueStoreError, match=r"value\['a'\]\[1\]: dataclass .*Outside is outside tcpmodels"):
        dump_value({"a": [1, Outside()]}, tmp_path / "a")
    with pytest.raises(ValueStoreError, match=r"value\['f'\]: a builtins.builtin_function_or_method cannot be stored without pickle"):
        dump_value({"f": len}, tmp_path / "b")
    with pytest.raises(ValueStoreError, match=r"value: numpy array of dtype object"):
        dump_value(np.array([object()]), tmp_path / "c")


@pytest.mark.parametrize("node, message", [
    ({"__type__": "dataclass", "class": "os:PathLike", "fields": {}}, r"class 'os:PathLike' is outside tcpmodels"),
    ({"__type__": "dataclass", "class": "tcpmodels.sweep:sweep", "fields": {}}, r"is not a dataclass of tcpmodels"),
    ({"__type__": "table", "file": "../../etc/passwd"}, r"file '../../etc/passwd' is outside the value directory"),
    ({"__type__": "pickle", "data": ""}, r"unknown __type__ 'pickle'"),
])
def test_a_tampered_value_file_names_no_code_outside_tcpmodels(tmp_path, node, message):
    d = tmp_path / "v"
    d.mkdir()
    (d / "value.json").write_text(json.dumps({"format": "tcpmodels.valuestore/1", "value": node}))
    with pytest.raises(ValueStoreError, match=message):
        load_value(d)


def test_dump_value_refuses_a_directory_that_is_not_empty(tmp_path):
    """An earlier value's files would be overwritten or left beside: refused, naming the directory."""
    dump_value({"a": 1}, tmp_path / "v")
    with pytest.raises(ValueStoreError, match=r"v: the value directory must be empty or absent \(it holds 1 entries\)"):
        dump_value({"a": 2}, tmp_path / "v")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueStoreError, match="a file"):
        dump_value(1, tmp_path / "f")
    (tmp_path / "empty").mkdir()
    assert load_value(dump_value([1, 2], tmp_path / "empty").parent) == [1, 2]

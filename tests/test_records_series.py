"""Packed sample series (tcpmodels.records.series): lossless on real records, smaller, clear errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpmodels.experiments.p3.kernel_session import _PACKING
from tcpmodels.records.series import SERIES_FORMAT, as_sample_list, is_packed_series, pack_series, unpack_series

REPO = Path(__file__).resolve().parents[1]
#: 8 pinned P3 samples of 2026-11-29, each with two flows' TCP_INFO series stored as lists
PART07 = REPO / "data" / "datasets" / "p3_kernel_x_records_part07.jsonl.gz"
#: the packing the P3 runner writes its records with
P3_PACKING = _PACKING


def _gz_size(records: list[dict]) -> int:
    return len(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode(), 9))


def test_shipped_p3_series_round_trip_exactly_and_shrink():
    records = [json.loads(line) for line in gzip.open(PART07, "rt")]
    packed_records = []
    for r in records:
        flows = []
        for f in r["flows"]:
            packed = pack_series(f["samples"], **P3_PACKING)
            # through JSON, as a record file stores it: every value back, floats bit for bit
            back = unpack_series(json.loads(json.dumps(packed)))
            assert back == f["samples"]
            assert [list(s) for s in back[:3]] == [list(s) for s in f["samples"][:3]]  # key order too
            assert {c: col.get("us") for c, col in packed["columns"].items() if "us" in col} == \
                {"t_s": "div", "srtt_s": "mul", "min_rtt_s": "mul"}
            assert all(packed["columns"][c].get("delta") for c in P3_PACKING["delta_fields"])
            flows.append({**f, "samples": packed})
        packed_records.append({**r, "flows": flows})
    before, after = _gz_size(records) / len(records), _gz_size(packed_records) / len(records)
    print(f"gzipped per sample: {before / 1e3:.1f} KB as lists, {after / 1e3:.1f} KB packed")
    assert after < 0.6 * before


def test_columns_that_do_not_decode_exactly_stay_as_they_came():
    samples = [{"t_s": 0.1234567, "n": 1}, {"t_s": 0.2, "n": 2.5}]  # not whole microseconds; a float counter
    packed = pack_series(samples, microsecond_fields=("t_s",), delta_fields=("n",))
    assert packed["columns"] == {"t_s": {"values": [0.1234567, 0.2]}, "n": {"values": [1, 2.5]}}
    assert unpack_series(packed) == samples


def test_missing_values_survive_and_stop_differencing():
    samples = [{"t_s": 0.1, "srtt_s": None, "acked": 10}, {"t_s": 0.2, "srtt_s": 35034 * 1e-6, "acked": None}]
    packed = pack_series(samples, microsecond_fields=("t_s", "srtt_s"), delta_fields=("t_s", "acked"))
    assert packed["columns"]["srtt_s"] == {"values": [None, 35034], "us": "mul"}
    assert packed["columns"]["acked"] == {"values": [10, None]}  # no delta over a gap
    assert packed["columns"]["t_s"] == {"values": [100000, 100000], "us": "div", "delta": True}
    assert unpack_series(packed) == samples


def test_empty_series_and_plain_lists():
    assert unpack_series(pack_series([])) == []
    plain = [{"t_s": 0.1}]
    assert as_sample_list(plain) is plain
    assert as_sample_list(pack_series(plain)) == plain
    assert is_packed_series(pack_series(plain)) and not is_packed_series(plain)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"sample 1 has keys \['t_s'\]; sample 0 has \['t_s', 'cwnd'\]"):
        pack_series([{"t_s": 0.1, "cwnd": 10}, {"t_s": 0.2}])
    with pytest.raises(ValueError, match=r"fields \['rtt_s'\] are not in the samples"):
        pack_series([{"t_s": 0.1}], microsecond_fields=("rtt_s",))
    with pytest.raises(ValueError, match="not a packed sample series: format 'rows/9', expected 'columns/1'"):
        unpack_series({"format": "rows/9"})
    with pytest.raises(ValueError, match="not a packed sample series: format 'list'"):
        unpack_series([{"t_s": 0.1}])
    with pytest.raises(ValueError, match="column 't_s' has 1 values; the series has n = 2"):
        unpack_series({"format": SERIES_FORMAT, "n": 2, "columns": {"t_s": {"values": [1]}}})
    with pytest.raises(ValueError, match="unknown microsecond decoder 'ns'"):
        unpack_series({"format": SERIES_FORMAT, "n": 1, "columns": {"t_s": {"values": [1], "us": "ns"}}})
    with pytest.raises(ValueError, match="not a packed sample series"):
        as_sample_list({"t_s": [0.1]})


_time = st.one_of(
    st.integers(0, 10**9).map(lambda k: k * 1e-6),             # rtt_us * 1e-6, as the traffic client converts
    st.floats(0, 1e3, allow_nan=False).map(lambda x: round(x, 6)),  # round(t, 6), its sample times
    st.floats(allow_nan=False, allow_infinity=False),
    st.none())
_count = st.one_of(st.integers(-2**62, 2**62), st.none(), st.booleans())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_time, _count, st.sampled_from([0, 1, 3, 4])), max_size=40))
def test_any_series_round_trips_exactly(rows):
    samples = [{"t_s": t, "bytes_acked": b, "ca_state": c} for t, b, c in rows]
    packed = json.loads(json.dumps(pack_series(samples, microsecond_fields=("t_s",), delta_fields=("t_s", "bytes_acked"))))
    back = unpack_series(packed)
    assert back == samples
    assert [type(s["t_s"]) for s in back] == [type(s["t_s"]) for s in samples]
    assert [type(s["bytes_acked"]) for s in back] == [type(s["bytes_acked"]) for s in samples]

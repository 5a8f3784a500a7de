"""Consistent map snapshots and timeout counts of tm_lia / tm_olia, without a kernel: the
sequence-counter test of a record read three times, the rows made from the records (model on
each record's own inputs), the goal-(c) verdict with torn reads counted, and the timeouts per
loss event of the smaller subflow."""

from __future__ import annotations

import ctypes
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.experiments.kernel_coupled_cc import goal_ratios, rto_share_ci, timeout_difference, timeout_table
from tcpmodels.experiments.kernel_coupled_cc.validation import _snapshot_rows, _timeout_rows
from tcpmodels.testbed import kernel_cc
from tcpmodels.testbed.kernel_cc.mapread import Calc, LiaConn, OliaConn, calc_dict, steady


def _calc(seq_begin, seq_end, cwnd=(0, 10, 5), srtt_us=(0, 20000, 20000), ell=(0, 100, 50), incr=0.0, slot=1,
          alpha=1.0):
    c = Calc()
    c.seq_begin, c.seq_end, c.slot = seq_begin, seq_end, slot
    for i, (w, r, l_) in enumerate(zip(cwnd, srtt_us, ell)):
        c.cwnd[i], c.srtt_us[i], c.ell[i] = w, r, l_
    c.incr_q32 = int(round(incr * 2**32))
    c.alpha_q16 = int(round(alpha * 65536))
    c.updated_ns = 5_000_000
    return c


def test_layouts_match_the_c_structs():
    """Sizes and offsets as clang lays the C structs out for BPF (x86-64 alignment): tm_calc 136 bytes,
    tm_conn 248 + 8 * 136, tm_olia_conn 280 + 4 * 136 (read_connections also checks the size against
    the loaded map's value size)."""
    assert ctypes.sizeof(Calc) == 136 and Calc.incr_q32.offset == 104 and Calc.seq_end.offset == 128
    assert ctypes.sizeof(LiaConn) == 248 + 8 * 136 and LiaConn.calc.offset == 248
    assert ctypes.sizeof(OliaConn) == 280 + 4 * 136 and OliaConn.calc.offset == 280


@pytest.mark.skipif(kernel_cc.unavailable_reason(need_root=False) is not None,
                    reason=f"kernel_cc: {kernel_cc.unavailable_reason(need_root=False)}")
@pytest.mark.parametrize("name,struct,layout", [("tm_lia", "tm_conn", LiaConn), ("tm_olia", "tm_olia_conn", OliaConn),
                                                ("tm_olia", "tm_calc", Calc)])
def test_layouts_match_the_compiled_objects(name, struct, layout):
    """The struct sizes in the BTF of the compiled programs (no root needed) equal the layouts here."""
    from tcpmodels.testbed._system import find_tool

    obj = kernel_cc.build(name)
    raw = subprocess.run([find_tool("bpftool") or "bpftool", "btf", "dump", "file", str(obj), "format", "raw"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(rf"STRUCT '{struct}' size=(\d+)", raw)
    assert m and int(m.group(1)) == ctypes.sizeof(layout)


@pytest.mark.parametrize("first,third,ok", [
    ((7, 7), (7, 7), True),     # no write between the first and the third copy
    ((7, 6), (7, 7), False),    # a write in progress during the first copy: may overlap the middle one
    ((7, 7), (8, 7), False),    # a write started before the third copy
    ((7, 7), (8, 8), False),    # a whole write between: the middle copy may hold part of it
    ((9, 7), (9, 7), False),    # two writers in progress throughout
])
def test_steady_needs_equal_counters_in_first_and_third_copy(first, third, ok):
    assert steady(_calc(*first), _calc(*third)) is ok


def test_calc_dict_keeps_the_occupied_slots_in_order():
    d = calc_dict(_calc(4, 4, incr=0.25), True)
    assert d["slots"] == [1, 2] and d["cwnd_segments"] == [10, 5] and d["srtt_s"] == pytest.approx([0.02, 0.02])
    assert d["ell_segments"] == [100, 50] and d["incr_segments"] == 0.25 and d["seq"] == 4 and d["consistent"]


def _entry(calcs, token=1):
    return {"token": token, "read_ns": 7_000_000, "calc": calcs,
            "subflows": [{"slot": 1, "loss_events": 3, "rto_events": 1, "delivered_segments": 900, "cwnd_segments": 10},
                         {"slot": 2, "loss_events": 5, "rto_events": 4, "delivered_segments": 100, "cwnd_segments": 2}]}


def test_olia_rows_compare_with_the_model_on_the_records_own_inputs():
    """Equal RTTs, windows 10 and 5, l 100 and 50: the larger window is also the best path (no collected
    path), so OLIA's increase is the first term w_i / (sum w)^2 = 10 / 225 for slot 1. A record with
    one occupied slot gives no row; a torn record gives a row marked inconsistent."""
    good = calc_dict(_calc(4, 4, incr=10 / 15**2), True)
    torn = calc_dict(_calc(5, 4, incr=0.9, slot=2), False)
    alone = calc_dict(_calc(2, 2, cwnd=(0, 10, 0)), True)
    rows = _snapshot_rows("tm_olia", [_entry([good, torn, alone])], 3, "shared")
    assert len(rows) == 2
    r0, r1 = rows
    assert r0["consistent"] and r0["incr_rel_error_of_terms"] == pytest.approx(0.0, abs=1e-8)   # Q32 rounding
    assert r0["slot"] == 1 and r0["seq"] == 4 and r0["snapshot_method"] == "seqcount" and r0["age_s"] == pytest.approx(2e-3)
    assert not r1["consistent"] and abs(r1["incr_rel_error_of_terms"]) > 1


def test_lia_rows_compare_alpha_on_the_records_own_inputs():
    from tcpmodels.models.mptcp import lia_alpha

    a = float(lia_alpha([10, 5], [0.02, 0.04]))
    rec = calc_dict(_calc(8, 8, cwnd=(0, 10, 5), srtt_us=(0, 20000, 40000), alpha=a), True)
    (row,) = _snapshot_rows("tm_lia", [_entry([rec])], 0, "disjoint")
    assert row["experiment"] == "alpha" and abs(row["alpha_rel_error"]) < 1e-4 and json.loads(row["cwnd_segments"]) == [10, 5]


def test_goal_c_tests_consistent_records_and_counts_torn_ones():
    rows = [{"experiment": "olia_incr", "variant": "tm_olia", "snapshot_method": "seqcount", "token": 1, "slot": 1, "seq": 4,
             "consistent": True, "incr_rel_error_of_terms": 1e-6}] * 2          # the same record read twice
    rows += [{"experiment": "olia_incr", "variant": "tm_olia", "snapshot_method": "seqcount", "token": 1, "slot": 2, "seq": 9,
              "consistent": True, "incr_rel_error_of_terms": 0.03}]
    rows += [{"experiment": "olia_incr", "variant": "tm_olia", "snapshot_method": "seqcount", "token": 1, "slot": 2, "seq": 10,
              "consistent": False, "incr_rel_error_of_terms": 2.9}]              # torn: counted, not tested
    rows += [{"experiment": "olia_incr", "variant": "tm_olia", "token": 5, "acks": 3, "incr_rel_error_of_terms": 0.5}]   # earlier single read
    from tcpmodels.experiments.kernel_coupled_cc import claims

    out = goal_ratios(pd.DataFrame(rows))
    c = out["goal_c_incr_tm_olia"]
    assert (c["n_snapshots"], c["n_consistent"], c["n_torn"], c["n_distinct"]) == (4, 3, 1, 2)
    assert c["max"] == pytest.approx(0.03) and c["within"] == 0.5
    assert out["goal_c_incr_tm_olia_single_read"]["max"] == 0.5
    assert claims(pd.DataFrame(rows))["verdict"].tolist() == ["contradicted"]  # 3 % > 2 %: exact comparison
    ok = goal_ratios(pd.DataFrame(rows[:2] + rows[3:4]))["goal_c_incr_tm_olia"]
    assert ok["n_torn"] == 1 and claims(pd.DataFrame(rows[:2] + rows[3:4]))["verdict"].tolist() == ["supported"]


def test_timeout_rows_order_subflows_by_delivered_segments():
    (row,) = _timeout_rows("tm_olia", [_entry([])], 2, "shared")
    assert (row["smaller_loss_events"], row["smaller_rto_events"]) == (5, 4)
    assert (row["larger_loss_events"], row["larger_rto_events"]) == (3, 1)
    assert json.loads(row["delivered_segments"]) == [100, 900]


def test_timeout_table_and_claims():
    rng = np.random.default_rng(1)
    rows = []
    for rep in range(8):
        for v, p in (("tm_olia", 0.5), ("tm_lia", 0.1)):
            n = 40
            rows.append({"experiment": "timeouts", "variant": v, "setting": "shared", "rep": rep,
                         "smaller_loss_events": n, "smaller_rto_events": int(rng.binomial(n, p)),
                         "larger_loss_events": 60, "larger_rto_events": 1,
                         "delivered_segments": json.dumps([4000, 20000])})
    df = pd.DataFrame(rows)
    t = timeout_table(df)
    o = t.loc[("shared", "tm_olia")]
    assert o.runs == 8 and o.smaller_loss_events == 320
    assert o.smaller_rto_per_loss == pytest.approx(df[df.variant == "tm_olia"].smaller_rto_events.sum() / 320)
    assert o.smaller_rto_per_loss_ci_low < o.smaller_rto_per_loss < o.smaller_rto_per_loss_ci_high
    assert t.loc[("shared", "tm_lia")].larger_rto_per_loss == pytest.approx(1 / 60)
    assert o.smaller_loss_events_per_1000_segments == pytest.approx(10.0) and o.larger_loss_events_per_1000_segments == 3.0
    # no timeout in 320 loss events: the upper bound is the rule of three's, about 3 / 320
    none = timeout_table(df.assign(smaller_rto_events=0)).loc[("shared", "tm_lia")]
    assert none.smaller_rto_per_loss == 0 and none.smaller_rto_per_loss_upper95 == pytest.approx(1 - 0.05 ** (1 / 320))
    assert none.smaller_rto_per_loss_upper95 == pytest.approx(3 / 320, rel=0.01)
    from tcpmodels.experiments.kernel_coupled_cc import claims

    tv = timeout_difference(df)
    assert tv["ci_low"] > 0 and tv["runs_olia"] == 8 and len(tv["boot"]) == 4000
    assert (tv["ci_low"], tv["ci_high"]) == pytest.approx(tuple(np.nanquantile(tv["boot"], [0.025, 0.975])))
    verdict = lambda d: claims(d)["verdict"].iloc[0]  # noqa: E731 (the shared setting's only claim)
    assert verdict(df) == "supported"                     # 0.4 more timeouts per loss event, far beyond 0.01
    same = df.assign(smaller_rto_events=df.rep % 3)       # identical in both variants: no difference
    assert verdict(same) == "inconclusive"                # the CI holds 0 and 0.01
    assert verdict(df.assign(variant=df.variant.replace({"tm_olia": "tm_lia", "tm_lia": "tm_olia"}))) == "contradicted"
    assert timeout_difference(df[df.variant == "tm_lia"]) == {}
    assert np.isnan(rto_share_ci([1], [2])[0])


def test_diag_counter_names_follow_the_c_indices():
    """mapread.DIAG_COUNTERS names the TM_DIAG_* indices of tm_bpf.h in their order, one per counter."""
    from tcpmodels.testbed.kernel_cc.mapread import DIAG_COUNTERS

    src = (Path(kernel_cc.__file__).parent / "tm_bpf.h").read_text()
    idx = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define TM_DIAG_([A-Z_]+) (\d+)\b", src)}
    n = idx.pop("N")
    assert n == len(DIAG_COUNTERS) and sorted(idx.values()) == list(range(n))
    c_names = [name for name, _ in sorted(idx.items(), key=lambda kv: kv[1])]
    assert dict(zip(c_names, DIAG_COUNTERS)) == {
        "ACKED_BIG": "acked_big", "CWND_BIG": "cwnd_big", "SSTHRESH_BIG": "ssthresh_big", "UNDO_BIG": "undo_big",
        "INCR_CLAMPED": "incr_clamped", "SEEN": "subflows_seen", "RELEASE": "releases",
        "RELEASE_NO_TOKEN": "release_no_token", "RELEASE_REMEMBERED": "release_remembered_token",
        "RELEASE_NO_ENTRY": "release_no_entry", "RELEASE_DELETED": "release_deleted_entry",
        "TOKEN_CHANGED": "release_token_changed", "CWND_BIG_STATE": "cwnd_big_at_state_change",
        "ID_CHANGED": "subflow_id_changed"}


def _struct_ops(map_id, state, prog_ids):
    """One struct_ops map as ``bpftool -j struct_ops dump`` shows it (bpftool 7.1, fields trimmed)."""
    data = {"init": f"void (struct sock *) tm_olia_init/prog_id:{prog_ids[0]}",
            "release": f"void (struct sock *) tm_olia_release/prog_id:{prog_ids[1]}",
            "cwnd_event": "void (struct sock *, enum tcp_ca_event) 0", "name": "tm_olia"}
    return [{"bpf_map_info": {"type": 26, "id": map_id, "name": "tm_olia"}},
            {"bpf_struct_ops_tcp_congestion_ops": {"common": {"refcnt": {"refs": {"counter": 2}}, "state": state},
                                                   "data": data}}]


def test_registered_map_ids_are_the_maps_of_the_struct_ops_in_use(monkeypatch):
    """Two loaded generations of tm_olia: one unregistered (TOBEFREE, still held by a socket) and the
    registered one (INUSE). Only the maps the INUSE one's programs use count, and a name registered by
    no struct_ops map in use has none; _map_ids keeps only the maps of that name among them."""
    from tcpmodels.testbed.kernel_cc import mapread

    outputs = {
        ("struct_ops", "dump", "name", "tm_olia"): _struct_ops(300, "BPF_STRUCT_OPS_STATE_TOBEFREE", (301, 302))
        + _struct_ops(400, "BPF_STRUCT_OPS_STATE_INUSE", (401, 402)),
        ("struct_ops", "dump", "name", "tm_lia"): _struct_ops(500, "BPF_STRUCT_OPS_STATE_TOBEFREE", (501, 502)),
        ("prog", "show"): [{"id": 301, "map_ids": [290]}, {"id": 302, "map_ids": [290, 291]},
                           {"id": 401, "map_ids": [392]}, {"id": 402, "map_ids": [390, 391, 392]},
                           {"id": 501, "map_ids": [490]}, {"id": 502, "map_ids": [490, 491]}],
        ("map", "show"): [{"id": 290, "name": "tm_olia_conn", "bytes_value": 824},
                          {"id": 291, "name": "tm_olia_diag", "bytes_value": 8},
                          {"id": 390, "name": "tm_olia_conn", "bytes_value": 824},
                          {"id": 391, "name": "tm_olia_diag", "bytes_value": 8},
                          {"id": 392, "name": "tm_olia.rodata", "bytes_value": 64}],
    }

    def fake_run(cmd, check=True, **kw):
        out = outputs.get(tuple(cmd[2:]))
        return subprocess.CompletedProcess(cmd, 0 if out is not None else 255, json.dumps(out or []), "")

    monkeypatch.setattr(mapread, "run", fake_run)
    ids = mapread.registered_map_ids("tm_olia")
    assert ids == {390, 391, 392}
    assert mapread.registered_map_ids("tm_lia") == set() and mapread.registered_map_ids("tm_reno") == set()
    assert mapread._map_ids("tm_olia_conn") == [(290, 824), (390, 824)]
    assert mapread._map_ids("tm_olia_conn", ids) == [(390, 824)] and mapread._map_ids("tm_olia_diag", set()) == []

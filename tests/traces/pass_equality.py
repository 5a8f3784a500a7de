"""The compiled per-connection pass (tcpmodels.traces.cflows) against the numpy/pandas reference.

:func:`assert_pass_equal` runs :func:`~tcpmodels.traces.annotate`, :func:`~tcpmodels.traces.rtt_samples` and
:func:`~tcpmodels.traces.flows` under both kernels on one packet table and compares every column exactly
(values, dtypes, index, warnings). :func:`mutated_tables` makes hostile packet tables from real ones.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpmodels.traces import TraceWarning, annotate, flows, read_pcap, rtt_samples
from tcpmodels.traces.connpass import compiled_pass_available
from tcpmodels.traces.pcapfile import CaptureFileError, set_kernel

needs_pass = pytest.mark.skipif(not compiled_pass_available(),
                                reason="the compiled pass tcpmodels.traces.cflows is not built (no C compiler at "
                                       "install time)")


def _run(table: pd.DataFrame, kernel: str) -> tuple[list, list[str]]:
    previous = set_kernel(kernel)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TraceWarning)
            out = [annotate(table), rtt_samples(table), flows(table)]
        return out, sorted(str(w.message) for w in caught if issubclass(w.category, TraceWarning))
    finally:
        set_kernel(previous)


def assert_pass_equal(table: pd.DataFrame, label: str = "") -> None:
    """Every column of annotate, rtt_samples and flows equal under the compiled and the numpy kernel."""
    ref, ref_warn = _run(table, "numpy")
    got, got_warn = _run(table, "c")
    for name, a, b in zip(("annotate", "rtt_samples", "flows"), ref, got):
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        except AssertionError as exc:
            raise AssertionError(f"{label}: {name} differs: {exc}") from None
    assert ref_warn == got_warn, f"{label}: warnings differ"


def read_quietly(path: Path) -> pd.DataFrame | None:
    """The packet table of a capture (None if the reader rejects the file)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            return read_pcap(path)
    except CaptureFileError:
        return None


def assert_captures_equal(folder: Path) -> int:
    """:func:`assert_pass_equal` on every capture file in ``folder``; returns how many were compared."""
    n = 0
    for path in sorted(folder.glob("*.pcap*")):
        table = read_quietly(path)
        if table is not None:
            assert_pass_equal(table, path.name)
            n += 1
    return n


#: Columns a mutation may overwrite, with the range of values drawn (inclusive upper bound).
_MUTABLE = {"seq": 2**32 - 1, "ack": 2**32 - 1, "window": 2**16 - 1, "payload_bytes": 3000, "ip_id": 2**16 - 1,
            "tsval": 2**32 - 1, "tsecr": 2**32 - 1, "sack_left": 2**32 - 1, "window_scale": 16,
            "mptcp_subtype": 8, "flags": 2**9 - 1}


def mutated_tables(table: pd.DataFrame, seed: int, copies: int = 6):
    """Hostile variants of a packet table: fields overwritten with random values (flags, sequence and
    acknowledgment numbers near the flow's own or anywhere, windows, window scales, timestamps options,
    MPTCP subtypes), rows copied (duplicates, late), rows dropped, timestamps moved backwards, endpoints
    swapped (a packet attributed to the other direction), ports changed (a new 4-tuple)."""
    rng = np.random.default_rng(seed)
    n = len(table)
    for _ in range(copies):
        t = table.copy()
        k = max(1, n // 20)
        rows = rng.choice(n, size=min(k, n), replace=False)
        for r in rows:
            col = str(rng.choice(list(_MUTABLE) + ["near_seq", "near_ack", "time", "swap", "port"]))
            i = t.index[r]
            if col == "near_seq":
                t.loc[i, "seq"] = np.uint32((int(t.at[i, "seq"]) + int(rng.integers(-3000, 3000))) % 2**32)
            elif col == "near_ack":
                t.loc[i, "ack"] = np.uint32((int(t.at[i, "ack"]) + int(rng.integers(-3000, 3000))) % 2**32)
            elif col == "time":
                t.loc[i, "timestamp_ns"] = int(t.at[i, "timestamp_ns"]) - int(rng.integers(0, 2_000_000_000))
            elif col == "swap":
                s, d = t.at[i, "src_addr"], t.at[i, "dst_addr"]
                if s in t["dst_addr"].cat.categories and d in t["src_addr"].cat.categories:
                    t.loc[i, "src_addr"], t.loc[i, "dst_addr"] = d, s
                    t.loc[i, "src_port"], t.loc[i, "dst_port"] = t.at[i, "dst_port"], t.at[i, "src_port"]
            elif col == "port":
                t.loc[i, "src_port"] = np.uint16(rng.integers(0, 2**16))
            else:
                dtype = t[col].dtype
                value = int(rng.integers(0, _MUTABLE[col] + 1))
                if col in ("window_scale", "mptcp_subtype"):
                    value -= 1  # -1: absent
                t.loc[i, col] = np.array(value).astype(dtype)
        # the flag columns follow the flags field; timestamps option flag follows a non-zero tsval sometimes
        flags = t["flags"].to_numpy()
        for name, bit in (("fin", 1), ("syn", 2), ("rst", 4), ("psh", 8), ("ack_flag", 16)):
            t[name] = (flags & bit) != 0
        t["has_timestamps"] = t["has_timestamps"].to_numpy() | (rng.random(n) < 0.02)
        # copies of rows (a packet captured twice, or again much later) and dropped rows
        extra = rng.choice(n, size=max(1, n // 50))
        late = rng.random(len(extra)) < 0.5
        dup = t.iloc[extra].copy()
        dup["timestamp_ns"] = dup["timestamp_ns"].to_numpy() + np.where(late, rng.integers(0, 10**9, len(extra)),
                                                                          rng.integers(0, 2000, len(extra)))
        keep = rng.random(n) > 0.02
        out = pd.concat([t[keep], dup])
        pos = np.concatenate([np.flatnonzero(keep), extra + 0.5])
        out = out.iloc[np.argsort(pos, kind="stable")]
        out["frame_index"] = np.arange(len(out), dtype=np.int64)
        out["timestamp_s"] = out["timestamp_ns"].to_numpy() / 1e9
        yield out.reset_index(drop=True)

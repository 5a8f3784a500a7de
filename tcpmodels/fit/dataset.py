"""Campaign records + captures -> the ``fit_*`` dataset (Parquet and CSV) with provenance.

Called by ``python -m tcpmodels.experiments.fit build``. Writes to ``<data_dir>/datasets/``:

- ``fit_flows``: one row per single-flow run: the run's settings, the capture
  estimates of :func:`tcpmodels.fit.flow_estimates`, TCP_INFO summaries over the same
  window, the kernel's own counters (timeouts, recoveries, tail-loss probes) and
  the testbed's (random drops, queue drops), load average and lock wait;
- ``fit_epochs``: window-reduction epochs detected in each run's TCP_INFO cwnd
  (:func:`tcpmodels.fit.cubic.cwnd_epochs`);
- ``fit_tcpinfo``: the TCP_INFO samples themselves (t, cwnd, ssthresh, srtt, ca_state);
- ``fit_mptcp_subflows`` and ``fit_mptcp_tcpinfo``: the two-path MPTCP runs per subflow;
- ``fit_provenance.json``: what ran where, definitions, file hashes.

Trimmed captures of a few runs go to ``<data_dir>/captures/fit_<run>.pcap.gz`` with a
JSON beside each.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import REPO_ROOT, write_provenance, write_tables
from tcpmodels.datasets.fit import SCHEMA
from tcpmodels.fit.cubic import cwnd_epochs
from tcpmodels.fit.trace import flow_estimates
from tcpmodels.records import JsonlRecords, gzip_reproducibly, shipped_git_state, utc_now
from tcpmodels.traces import TraceWarning, annotate, read_pcap
from tcpmodels.traces.trim import trim_capture

__all__ = ["analyse_record", "write_dataset"]

_KEYS = ("kind", "cc", "rtt_ms", "setting", "rep")
_TCPINFO_COLS = ["t_s", "cwnd_segments", "ssthresh_segments", "srtt_s", "ca_state", "total_retrans"]


def _read(path: Path) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)  # ARP frames etc. are counted in the accounting
        return read_pcap(path)


def _window_mean(samples: pd.DataFrame, col: str, a: float, b: float) -> float:
    s = samples[(samples["t_rel_s"] >= a) & (samples["t_rel_s"] <= b)]
    return float(s[col].mean()) if len(s) else np.nan


def analyse_record(rec: dict, out_dir: Path) -> dict:
    """Everything the dataset keeps of one run (a dict of tables' rows).

    Parameters
    ----------
    rec : dict
        One record of the campaign's ``records.jsonl`` (``kind`` ``"single"`` or
        ``"mptcp"``, its settings, capture paths, TCP_INFO samples and kernel counters).
    out_dir : Path
        The campaign folder the record's capture paths are relative to.

    Returns
    -------
    dict
        Rows (lists of dicts) for the tables ``flows``, ``epochs``, ``tcpinfo``,
        ``mptcp_subflows`` and ``mptcp_tcpinfo``; a single-path run fills the first
        three, an MPTCP run the last two.

    Raises
    ------
    KeyError
        If the record lacks a field the analysis needs.
    ValueError, OSError
        If a capture cannot be read or holds no TCP payload.
    """
    base = {k: rec[k] for k in _KEYS}
    base["name"] = rec["name"]
    samples = pd.DataFrame(rec.get("tcp_info_samples") or [])
    out: dict = {"flows": [], "epochs": [], "tcpinfo": [], "mptcp_subflows": [], "mptcp_tcpinfo": []}
    nd = rec.get("netstat_delta", {})
    if rec["kind"] == "single":
        packets = _read(out_dir / rec["captures"][0]["path"])
        an = annotate(packets)
        est = flow_estimates(packets, annotated=an)
        row = {**base, "duration_s": rec["run"]["duration_s"], "rate_bps": rec["run"]["rate_bps"],
               "capacity_bps": rec["run"]["rate_bps"] * 1448 / 1514, "loss_rate_set": rec["loss_rate"],
               "buffer_bytes": rec["buffer_bytes"], "bdp_bytes": rec["bdp_bytes"],
               "rmem_max_bytes": rec.get("rmem_max_bytes"), **est.to_dict()}
        # TCP_INFO over the same window: the capture's t = 0 is the SYN, TCP_INFO's t = 0 the connect() call
        syn_t = packets.loc[packets["syn"] & ~packets["ack_flag"], "timestamp_s"]
        t0_cap = float(syn_t.iloc[0]) if len(syn_t) else float(packets["timestamp_s"].iloc[0])
        start_unix = rec["flow"].get("start_unix_s", t0_cap)
        if len(samples):
            samples["t_rel_s"] = samples["t_s"] + (start_unix - t0_cap)
            a, b = est.window_start_s, est.window_end_s
            row.update(tcpinfo_cwnd_mean_segments=_window_mean(samples, "cwnd_segments", a, b),
                       tcpinfo_srtt_mean_s=_window_mean(samples, "srtt_s", a, b),
                       tcpinfo_min_rtt_s=float(samples["min_rtt_s"].replace(0, np.nan).min()),
                       tcpinfo_total_retrans=int(samples["total_retrans"].max()),
                       tcpinfo_delivery_rate_mean_bps=_window_mean(samples, "delivery_rate_bps", a, b))
            ep = cwnd_epochs(samples["t_s"], samples["cwnd_segments"], samples["ssthresh_segments"],
                             samples["ca_state"], samples["srtt_s"])
            row["epochs_detected"] = int(len(ep))
            # the same loss seen in the capture: the event opening nearest to the TCP_INFO reduction
            ev_t = est.events["start_s"].to_numpy() - (start_unix - t0_cap)
            for e in ep.to_dict("records"):
                cap_w = np.nan
                if len(ev_t):
                    j = int(np.argmin(np.abs(ev_t - e["loss_s"])))
                    if abs(ev_t[j] - e["loss_s"]) <= 0.05 + 2 * est.rtt_median_s:
                        cap_w = float(est.events["flight_before_segments"].iloc[j])
                out["epochs"].append({**base, **e, "capture_w_max_segments": cap_w})
            ti = samples[_TCPINFO_COLS].copy()
            for k, v in base.items():
                ti[k] = v
            out["tcpinfo"] = ti.to_dict("records")
        snd = nd.get("snd", {})
        rcv = nd.get("rcv", {})
        row.update(kernel_timeouts=snd.get("TcpExt.TCPTimeouts"), kernel_recoveries=snd.get("TcpExt.TCPSackRecovery"),
                   kernel_loss_probes=snd.get("TcpExt.TCPLossProbes"), kernel_fast_retrans=snd.get("TcpExt.TCPFastRetrans"),
                   kernel_retrans_segs=snd.get("Tcp.RetransSegs"), kernel_out_segs=snd.get("Tcp.OutSegs"),
                   kernel_spurious_rtos=snd.get("TcpExt.TCPSpuriousRTOs"), receiver_delayed_acks=rcv.get("TcpExt.DelayedACKs"))
        de = rec.get("delay_elements", {}).get("pa", {})
        ab = de.get("a_to_b", {})
        row["random_drops_data"] = ab.get("dropped_loss")
        row["random_drop_rate_data"] = ab.get("dropped_loss", 0) / ab["received"] if ab.get("received") else np.nan
        ca, cb = rec.get("counters_after", {}), rec.get("counters_before", {})
        if "r:pb" in ca and "r:pb" in cb:
            row["queue_drops"] = ca["r:pb"]["qdisc_drops"] - cb["r:pb"]["qdisc_drops"]
        row.update(load_avg_1min_before=rec["load_avg_before"][0], load_avg_1min_after=rec["load_avg_after"][0],
                   lock_wait_s=rec.get("lock_wait_s"), wall_s=rec.get("wall_s"),
                   packets_captured=rec["captures"][0].get("packets_captured"),
                   cc_effective=rec["flow"].get("cc_effective"), started_utc=rec["started_utc"])
        out["flows"].append(row)
    elif rec["kind"] == "mptcp":
        for cap in rec["captures"]:
            packets = _read(out_dir / cap["path"])
            est = flow_estimates(packets)
            iface = cap["interface"]
            path_i = int(iface[1:])
            local = f"10.0.{path_i + 1}.2"
            sub = samples[samples.get("local", pd.Series(dtype=str)).astype(str).str.startswith(local + ":")] \
                if "local" in samples else samples.iloc[0:0]
            row = {**base, "path": path_i, "interface": iface, "path_rtt_ms": rec["paths"][path_i]["rtt_ms"],
                   "path_loss_rate_set": rec["paths"][path_i]["loss_rate"], **est.to_dict(),
                   "tcpinfo_cwnd_mean_segments": float(sub["cwnd_segments"].mean()) if len(sub) else np.nan,
                   "tcpinfo_srtt_mean_s": float(sub["srtt_s"].mean()) if len(sub) else np.nan,
                   "subflow": int(sub["subflow"].iloc[0]) if len(sub) else -1,
                   "connection_rate_bps": rec["flow"].get("rate_bps"),
                   "load_avg_1min_before": rec["load_avg_before"][0], "lock_wait_s": rec.get("lock_wait_s")}
            out["mptcp_subflows"].append(row)
            if len(sub):
                ti = sub[["t_s", "cwnd_segments", "ssthresh_segments", "srtt_s", "ca_state", "total_retrans"]].copy()
                ti["path"] = path_i
                for k, v in base.items():
                    ti[k] = v
                out["mptcp_tcpinfo"] += ti.to_dict("records")
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_dataset(out_dir: str | Path, data_dir: str | Path, *, captures_to_ship: tuple[str, ...] = (),
                  ship_seconds: float = 6.0, allow_dirty: bool = False) -> dict:
    """Analyse every record in ``<out_dir>/records.jsonl`` and write the ``fit_*`` dataset. Returns a summary.

    A shipped dataset (``data_dir`` inside the repository's ``data/``) is refused from a dirty tree
    unless ``allow_dirty`` (:func:`tcpmodels.records.shipped_git_state`).

    Parameters
    ----------
    out_dir : str or Path
        The campaign folder (``records.jsonl``, captures, optional ``campaign.json``).
    data_dir : str or Path
        Receives ``datasets/fit_*.parquet`` (and ``.csv`` for flows, epochs and MPTCP
        subflows), ``datasets/fit_records.jsonl.gz`` (the campaign's raw records, every line),
        ``datasets/fit_provenance.json`` and the shipped captures in ``captures/``.
    captures_to_ship : tuple of str
        Runs whose captures are trimmed and shipped as fixtures, each ``"name"`` or
        ``"name:seconds"``.
    ship_seconds : float
        Length kept of a shipped capture when the item gives none. [s]
    allow_dirty : bool
        Write a shipped dataset (under the repository's ``data/``) even from a working tree with
        uncommitted changes (:func:`tcpmodels.records.shipped_git_state`; the provenance says so).

    Returns
    -------
    dict
        ``runs`` (recorded, the latest record of each key), ``failed`` (runs with an error
        or whose analysis raised), ``files`` (name -> rows and SHA-256) and ``shipped``
        (capture file names).

    Raises
    ------
    ValueError
        If ``captures_to_ship`` names a run that is not recorded.
    """
    out_dir, data_dir = Path(out_dir), Path(data_dir)
    git = shipped_git_state(REPO_ROOT, data_dir, allow_dirty=allow_dirty)
    records = JsonlRecords(out_dir / "records.jsonl", _KEYS).read()
    latest = {}
    for r in records:  # a rerun of a key supersedes the earlier record
        latest[tuple(r[k] for k in _KEYS)] = r
    tables: dict[str, list] = {"flows": [], "epochs": [], "tcpinfo": [], "mptcp_subflows": [], "mptcp_tcpinfo": []}
    failed = []
    for rec in latest.values():
        if rec.get("error"):
            failed.append({"name": rec["name"], "error": rec["error"]})
            continue
        try:
            part = analyse_record(rec, out_dir)
        except (ValueError, KeyError, IndexError, OSError) as exc:
            failed.append({"name": rec["name"], "error": f"analysis: {type(exc).__name__}: {exc}"})
            continue
        for k in tables:
            tables[k] += part[k]
    ds = data_dir / "datasets"
    ds.mkdir(parents=True, exist_ok=True)
    files = {}
    for k, rows in tables.items():
        df = pd.DataFrame(rows)
        if df.empty:
            continue
        df = df.sort_values([c for c in ("kind", "cc", "setting", "rtt_ms", "rep", "t_s", "loss_s", "path") if c in df])
        if k.endswith("tcpinfo"):  # the bulk of the dataset: compact types (10 ms samples, integer windows)
            df = df.astype({"t_s": "float32", "cwnd_segments": "int32", "ssthresh_segments": "int32",
                            "srtt_s": "float32", "ca_state": "int8", "total_retrans": "int32"})
        for name in write_tables(SCHEMA, ds, {k: df}):  # Parquet, and CSV for flows, epochs, mptcp_subflows
            files[name] = {"rows": int(len(df)), "sha256": _sha256(ds / name)}
    raw = ds / "fit_records.jsonl.gz"  # the raw records (TCP_INFO samples and all), reproducible bytes
    gzip_reproducibly(out_dir / "records.jsonl", raw)
    files[raw.name] = {"rows": len(records), "sha256": _sha256(raw)}
    campaign = {}
    if (out_dir / "campaign.json").exists():
        campaign = json.loads((out_dir / "campaign.json").read_text())
    shipped = []
    by_name = {r["name"]: r for r in latest.values()}
    for item in captures_to_ship:
        name, _, secs = item.partition(":")
        seconds = float(secs) if secs else ship_seconds
        if name not in by_name:
            raise ValueError(f"--ship: no recorded run named {name!r}; names look like 'single-cubic-50ms-buf-r0'")
        rec = by_name[name]
        for cap in rec["captures"]:
            iface = cap["interface"]
            dst = data_dir / "captures" / f"fit_{name}-{iface}.pcap.gz"
            info = trim_capture(out_dir / cap["path"], dst, seconds=seconds)
            meta = {"fixture": dst.name, "run": name, "campaign": "tcpmodels.experiments.fit (issue 11)",
                    "capture_point": f"{cap['node']}:{iface}, the sender's interface ahead of delay and bottleneck"
                    if rec["kind"] == "single" else f"{cap['node']}:{iface} (MPTCP sender, path {iface})",
                    "snaplen_bytes": cap["snaplen_bytes"], "trimmed": info, "settings": rec["run"],
                    "buffer_bytes": rec.get("buffer_bytes"), "loss_rate": rec.get("loss_rate"),
                    "paths": rec.get("paths"), "host": rec["host"], "started_utc": rec["started_utc"],
                    "git": campaign.get("git"), "sha256": _sha256(dst), "recreate": "sudo .venv/bin/python -m tcpmodels.experiments.fit run; "
                    f"... build --ship {name}"}
            Path(str(dst)[: -len(".pcap.gz")] + ".json").write_text(json.dumps(meta, indent=1, default=str))
            shipped.append(dst.name)
    hosts = {json.dumps(r.get("host", {}), sort_keys=True) for r in latest.values() if "host" in r}
    prov = {
        "dataset": "fit_* (issue 11: formula models fitted to captured kernel traces)",
        "built_utc": utc_now(), "built_from": str(out_dir), "campaign": campaign,
        "hosts": [json.loads(h) for h in hosts], "git": git,
        "runs_recorded": len(latest), "runs_failed": failed, "files": files, "captures_shipped": shipped,
        "first_run_utc": min((r["started_utc"] for r in latest.values() if "started_utc" in r), default=None),
        "last_run_utc": max((r.get("finished_utc", "") for r in latest.values()), default=None),
        "definitions": {
            "loss_event": "retransmissions of one congestion signal: an event opens at a retransmission and lasts "
                          "max(one RTT, until the cumulative ACK covers the highest sequence sent before it); "
                          "see tcpmodels.fit.events",
            "loss_event_rate": "loss events / data segments sent (retransmissions included), steady window",
            "steady_window": "from the close of the first loss event (slow-start overshoot) to the last data segment",
            "rtt_mean_s": "mean of sequence-matched RTT samples (Karn) in the steady window, at the sender",
            "t0_s": "median over observed timeouts of (retransmission - previous transmission of the same seq)",
            "b": "segments newly acknowledged per advancing ACK",
            "w_max_segments": "largest receiver-advertised window (window << receiver's scale) / MSS",
            "throughput_bps": "bytes cumulatively acknowledged in the steady window / its length (goodput)",
        },
    }
    write_provenance(SCHEMA, ds, prov)
    return {"runs": len(latest), "failed": len(failed), "files": files, "shipped": shipped}

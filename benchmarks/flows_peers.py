"""Read + per-flow analysis as whole commands, side by side with tcptrace, checked for agreement.

Engines, each a whole command in its own process (interpreter start-up and imports included), on the same
file, interleaved run by run (A B C A B C ...) so that the machine's load falls on all alike:

``ours_table``   ``flows(read_pcap(path))``: the packet table in memory, then the flow table (the compiled
                 per-connection pass when built: ``TCPMODELS_TRACE_KERNEL=auto``).
``ours_stream``  ``stream_flows(path)``: decode -> per-connection state -> flow table, no packet table.
``ours_numpy``   ``flows(read_pcap(path))`` with ``TCPMODELS_TRACE_KERNEL=numpy`` (the reference path).
``tcptrace``     ``tcptrace -l -r -n path`` (Debian's tcptrace 6.6.7: C, one pass per connection; its long
                 output to /dev/null).

``whole_s`` is the wall time from ``Popen`` to the process's exit; ``cpu_s`` and ``peak_rss_mb`` come from
``wait4`` (the process and the children it waited for). The median of ``--repeat`` runs is reported and
``vs_tcptrace`` is tcptrace's median over the engine's (above 1: faster than tcptrace). The 1-minute load
average is recorded before and after every run (the machine is shared). Every engine first runs once,
untimed: our code then reads its bytecode from a cache, as an installed wheel does, instead of compiling
every module again in each timed run (``benchmarks/child_env.py``; rows from before 2026-12-08 lack the
``warmup`` and ``bytecode`` columns and include that compilation), and the capture is in the page cache for
every engine alike.

Agreement (``--check``, after the timed runs): ``tcptrace -l -r -n --csv`` against our flow table, per
connection and direction, with the definitions that differ as tests/traces/corpus_check.py
``compare_tcptrace`` states them: tcptrace's ``rexmt_data_pkts + outoforder_pkts`` is
``tcpmodels.traces.tcptrace_terms.tcptrace_rexmt`` of our annotation; its missed data may be ours + 1 in
a direction that sent a RST; a 4-tuple used by more than one connection on either side is not compared.

Usage::

    python benchmarks/flows_peers.py /work/bigcaps/interleaved_1M.pcap --repeat 5 --check
"""

from __future__ import annotations

import argparse
import csv
import importlib.util as _ilu
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "flows_peers.csv"

_spec = _ilu.spec_from_file_location("child_env", Path(__file__).resolve().with_name("child_env.py"))
child_env = _ilu.module_from_spec(_spec)
_spec.loader.exec_module(child_env)
ENGINES = ("ours_table", "ours_stream", "ours_numpy", "tcptrace")

_PY_TABLE = ("import sys, warnings\nwarnings.simplefilter('ignore')\n"
             "from tcpmodels.traces import flows, read_pcap\n"
             "f = flows(read_pcap(sys.argv[1]))\nprint(len(f), int(f['retransmitted_packets'].sum()))\n")
_PY_STREAM = ("import sys, warnings\nwarnings.simplefilter('ignore')\n"
              "from tcpmodels.traces.stream import stream_flows\n"
              "f = stream_flows(sys.argv[1])\nprint(len(f), int(f['retransmitted_packets'].sum()))\n")


def command(engine: str, path: Path) -> tuple[list[str], dict]:
    """The command line and environment of one engine."""
    if engine == "tcptrace":
        return ["tcptrace", "-l", "-r", "-n", str(path)], dict(os.environ)
    env = child_env.python_env(TCPMODELS_TRACE_KERNEL="numpy" if engine == "ours_numpy" else "auto")
    return [sys.executable, "-c", _PY_STREAM if engine == "ours_stream" else _PY_TABLE, str(path)], env


def run_once(engine: str, path: Path) -> dict:
    """One whole command: wall time, CPU time and peak memory (wait4), load before and after."""
    cmd, env = command(engine, path)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{engine} failed on {path} (exit {proc.returncode})")
    res = {"whole_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
           "load1_before": load0, "load1_after": os.getloadavg()[0]}
    if engine != "tcptrace":
        flows_, rtx = out.split()[:2]
        res.update(flows=int(flows_), retransmissions=int(rtx))
    return res


def tcptrace_csv(path: Path):
    """``tcptrace -l -r -n --csv``: one row per connection, tcptrace's column names."""
    import pandas as pd

    out = subprocess.run(["tcptrace", "-l", "-r", "-n", "--csv", str(path)], capture_output=True, text=True,
                         check=True).stdout
    lines = [ln for ln in out.splitlines() if ln and not ln.startswith("#")]
    df = pd.read_csv(io.StringIO("\n".join(lines)), skipinitialspace=True)
    df.columns = [c.strip() for c in df.columns]
    return df


def agreement(path: Path) -> dict:
    """Per connection and direction, our flow table against tcptrace's counters (see the module notes)."""
    import ipaddress
    import warnings

    import numpy as np
    import pandas as pd

    from tcpmodels.traces import annotate, flows, read_pcap
    from tcpmodels.traces.tcptrace_terms import tcptrace_rexmt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = read_pcap(path)
        an = annotate(table)
        ft = flows(table, an)
    ft["tcptrace_rexmt"] = tcptrace_rexmt(an).reindex(ft.index, fill_value=0).to_numpy()
    del table, an

    def norm(a) -> str:
        a = str(a)
        if a.startswith(":") and not a.startswith("::"):
            a = ":" + a
        try:
            return str(ipaddress.ip_address(a))
        except ValueError:
            return a

    src = [f"{norm(a)}|{int(p)}" for a, p in zip(ft["src_addr"], ft["src_port"])]
    dst = [f"{norm(a)}|{int(p)}" for a, p in zip(ft["dst_addr"], ft["dst_port"])]
    ft["src"], ft["dst"] = src, dst
    ft["pair"] = [" ".join(sorted(x)) for x in zip(src, dst)]
    tt = tcptrace_csv(path).copy()  # one block: the columns added below do not fragment it
    ea = [f"{norm(a)}|{int(p)}" for a, p in zip(tt["host_a"], tt["port_a"])]
    eb = [f"{norm(a)}|{int(p)}" for a, p in zip(tt["host_b"], tt["port_b"])]
    tt["pair"] = [" ".join(sorted(x)) for x in zip(ea, eb)]
    reused = set(tt["pair"][tt["pair"].duplicated()]) | set(
        ft.groupby("pair")["connection_id"].nunique().loc[lambda s: s > 1].index)
    fields = {"packets": ("packets", "total_packets"), "data_packets": ("data_packets", "actual_data_pkts"),
              "data_bytes": ("payload_bytes", "actual_data_bytes"),
              "unique_bytes": ("unique_payload_bytes", "unique_bytes_sent"),
              "retransmissions": ("tcptrace_rexmt", None), "missed_data": ("bytes_not_captured", "missed_data")}
    rows = []
    for d, ends in (("a2b", ea), ("b2a", eb)):
        part = pd.DataFrame({"pair": tt["pair"], "src": ends})
        for name, (_, col) in fields.items():
            if col is None:
                part[name] = tt[f"rexmt_data_pkts_{d}"] + tt[f"outoforder_pkts_{d}"]
            else:
                part[name] = tt[f"{col}_{d}"]
        part["dir"] = d
        rows.append(part)
    theirs = pd.concat(rows, ignore_index=True)
    theirs = theirs[~theirs["pair"].isin(reused)]
    ours = ft[~ft["pair"].isin(reused)][["pair", "src", "rst_seen"] + [v[0] for v in fields.values()]]
    m = theirs.merge(ours, on=["pair", "src"], how="left", suffixes=("_tt", ""))
    compared = m[m["packets"].notna() | (m["packets_tt"] > 0)]
    out = {"connections_tcptrace": int(len(tt)), "connections_ours": int(ft["connection_id"].nunique()),
           "tuples_reused_not_compared": len(reused), "directions_compared": int(len(compared)),
           "directions_tcptrace_only": int(compared["packets"].isna().sum())}
    both = compared[compared["packets"].notna()]
    examples = []
    for name, (ours_col, _) in fields.items():
        a = both[ours_col].to_numpy(np.float64)
        b = both[f"{name}_tt" if name in both and f"{name}_tt" in both else name].to_numpy(np.float64)
        if name == "missed_data":
            rst_plus_one = both["rst_seen"].to_numpy(bool) & (b == a + 1)
            a = np.where(rst_plus_one, a + 1, a)
            valid = ~np.isnan(b)
        else:
            valid = np.ones(len(a), bool)
        differ = valid & (a != b)
        out[f"{name}_agree"] = int((valid & ~differ).sum())
        out[f"{name}_differ"] = int(differ.sum())
        for i in np.flatnonzero(differ)[:2]:
            examples.append(f"{both['pair'].iloc[i]} {both['src'].iloc[i]} {name}: ours {a[i]:g}, tcptrace {b[i]:g}")
    out["examples"] = examples
    return out


def _versions() -> dict:
    tt = subprocess.run(["tcptrace", "-v"], capture_output=True, text=True)
    import numpy
    import pandas

    return {"python": platform.python_version(), "numpy": numpy.__version__, "pandas": pandas.__version__,
            "tcptrace": (tt.stdout + tt.stderr).strip().splitlines()[0] if (tt.stdout + tt.stderr).strip() else ""}


def append(path: Path, row: dict) -> None:
    """Append ``row`` to the CSV at ``path`` (new columns extend the header; older rows get them empty)."""
    rows, fields = [], []
    if path.exists():
        with open(path, newline="") as fh:
            r = csv.DictReader(fh)
            fields, rows = list(r.fieldnames or []), list(r)
    missing = [k for k in row if k not in fields]
    fields += missing
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows + [row])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="+", type=Path)
    ap.add_argument("--engines", nargs="+", default=["ours_table", "ours_stream", "tcptrace"], choices=ENGINES)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="compare with tcptrace's counters after the timed runs")
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    base = {"date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "host": platform.node(),
            "cpus": os.cpu_count(), "commit": child_env.git_commit(), **_versions()}
    for cap in args.captures:
        runs: dict[str, list[dict]] = {e: [] for e in args.engines}
        for e in args.engines:  # untimed: fills the bytecode cache and the page cache (child_env)
            run_once(e, cap)
        for _ in range(args.repeat):
            for e in args.engines:
                runs[e].append(run_once(e, cap))
        med = {e: statistics.median(r["whole_s"] for r in rs) for e, rs in runs.items()}
        agree = agreement(cap) if args.check and "tcptrace" in args.engines else None
        for e, rs in runs.items():
            row = {**base, "capture": cap.name, "file_bytes": cap.stat().st_size, "engine": e,
                   "repeat": len(rs), "warmup": 1, "bytecode": "cached", "whole_s": round(med[e], 3),
                   "whole_s_runs": ";".join(f"{r['whole_s']:.3f}" for r in rs),
                   "cpu_s": round(statistics.median(r["cpu_s"] for r in rs), 3),
                   "peak_rss_mb": round(max(r["peak_rss_mb"] for r in rs), 1),
                   "vs_tcptrace": round(med["tcptrace"] / med[e], 3) if "tcptrace" in med else "",
                   "flows": rs[0].get("flows", ""), "retransmissions": rs[0].get("retransmissions", ""),
                   "load1_min": round(min(r["load1_before"] for r in rs), 2),
                   "load1_max": round(max(max(r["load1_before"], r["load1_after"]) for r in rs), 2),
                   "tcptrace_agreement": json.dumps(agree) if (agree and e == "tcptrace") else ""}
            append(args.results, row)
            print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())

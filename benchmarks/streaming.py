"""Captures of any size: read (to a Parquet dataset) + flows on a local Dask cluster, time and peak memory.

Each capture is measured in a child process; its peak memory is the largest *sum* of the
resident set sizes of that process and all its children (the Dask workers), sampled every
0.2 s with psutil. Beside it: ``peak_rss_driver_gb`` (the child process's own peak: it reads the
capture, runs the Dask client and joins the flow tables), ``peak_rss_workers_gb`` (each other process's
own peak, largest first, ``;``-separated: the Dask workers) and ``rss_at_peak_gb`` (driver first, then
the others, in the sample where the sum peaked). ``cpu_s`` sums their CPU times (user + system, last seen: a shared machine slows the
wall clock, not this). One row per capture is appended to ``benchmarks/results/streaming.csv``
with the machine, the versions, the date and the load average (the machine may be shared).

``--check`` also reads the capture whole with ``read_pcap`` + ``flows`` (needs memory for the
whole table) and checks that the flow tables are equal.

``--method`` picks what is measured: ``parquet`` (``to_parquet`` + ``dataset_flows`` on Dask, the default),
``stream`` (``stream_flows``: one process, one pass, no packet table; with two CPUs allowed it decodes the next
chunk in a second thread, so ``--cpus 0`` measures it on one core) or ``dask_stream``
(``dask_stream_flows`` on ``--workers`` local workers, each connection on one worker; ``split`` records how the
capture was divided, its spill files go to ``--work-dir``). With several captures,
the exponent of wall time against packets is fitted by least squares over them (``fitted_exponent``).

Usage::

    python benchmarks/streaming.py /work/bigcaps/interleaved_10M.pcap /work/bigcaps/interleaved_100M.pcap
    python benchmarks/streaming.py --method stream /work/bigcaps/interleaved_{1M,3M,10M,30M}.pcap
    python benchmarks/streaming.py --method stream --cpus 0 /work/bigcaps/interleaved_{1M,3M,10M,30M}.pcap
    python benchmarks/streaming.py --check /work/bigcaps/interleaved_1M.pcap
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib.util as _ilu
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

_spec = _ilu.spec_from_file_location("child_env", Path(__file__).resolve().with_name("child_env.py"))
child_env = _ilu.module_from_spec(_spec)
_spec.loader.exec_module(child_env)

RESULTS = Path(__file__).resolve().parent / "results" / "streaming.csv"

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
cap, out, partitions, workers, check, memory_limit, reuse, method = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6], sys.argv[7], sys.argv[8]
t0 = time.perf_counter()
if method == "stream":
    from tcpmodels.traces.stream import stream_flows
    t_imp = time.perf_counter()
    f = stream_flows(cap)
    t2 = time.perf_counter()
    acc = f.attrs["accounting"]
    res = {"packets": acc.tcp_parsed, "records": acc.records_read, "flows": len(f), "read_s": None,
           "cluster_start_s": None, "flows_s": t2 - t_imp, "import_s": t_imp - t0,
           "max_live_connections": f.attrs["stream"]["max_live_connections"]}
elif method == "dask_stream":
    from tcpmodels.traces.cluster import dask_client
    from tcpmodels.traces.stream import dask_stream_flows
    t_imp = time.perf_counter()
    import os
    with dask_client(n_workers=workers, memory_limit=memory_limit) as client:
        t_start = time.perf_counter()
        f = dask_stream_flows(cap, client, spill_dir=os.path.dirname(out))
        t2 = time.perf_counter()
    acc = f.attrs["accounting"]
    res = {"packets": acc.tcp_parsed, "records": acc.records_read, "flows": len(f), "read_s": None,
           "cluster_start_s": t_start - t_imp, "flows_s": t2 - t_start, "import_s": t_imp - t0,
           "split": f.attrs["stream"]["split"]}
else:
    from tcpmodels.traces import to_parquet, flows, read_pcap
    from tcpmodels.traces.cluster import dask_client, dataset_flows
    from tcpmodels.traces.dataset import open_dataset
    t_imp = time.perf_counter()
    ds = open_dataset(reuse) if reuse else to_parquet(cap, out, partitions=partitions)
    t1 = time.perf_counter()
    with dask_client(n_workers=workers, memory_limit=memory_limit) as client:
        t_start = time.perf_counter()
        f = dataset_flows(ds, client=client)
    t2 = time.perf_counter()
    res = {"packets": sum(ds.rows), "records": ds.accounting.records_read, "flows": len(f),
           "read_s": None if reuse else t1 - t_imp, "cluster_start_s": t_start - t1, "flows_s": t2 - t_start,
           "import_s": t_imp - t0}
t2 = time.perf_counter()
res.update(retransmissions=int(f["retransmitted_packets"].sum()), payload_bytes=int(f["payload_bytes"].sum()),
           total_s=t2 - t0, method=method)
res["checked_equal"] = None
if check:
    import pandas as pd
    from tcpmodels.traces import flows, read_pcap
    whole = flows(read_pcap(cap))
    pd.testing.assert_frame_equal(f, whole, check_exact=True)
    res["checked_equal"] = True
print("RESULT " + json.dumps(res))
"""


def _tree_rss(proc: psutil.Process, cpu: dict[int, float], rss: dict[int, int] | None = None) -> int:
    """Sum of the resident set sizes of ``proc`` and its descendants; their CPU times (user + system) into
    ``cpu``, and each one's resident set size into ``rss`` (by pid) if given."""
    total = 0
    try:
        procs = [proc] + proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    for p in procs:
        try:
            r = p.memory_info().rss
            total += r
            if rss is not None:
                rss[p.pid] = r
            t = p.cpu_times()
            cpu[p.pid] = t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


#: Child processes smaller than this at their peak are not listed per process (multiprocessing's
#: resource tracker, ...); they still count in the summed peak. [bytes]
_SMALL_PROCESS = 100 << 20


def _gb_list(values) -> str:
    return ";".join(f"{v / 1e9:.3f}" for v in values)


def measure(capture: Path, partitions: int | None, workers: int, check: bool, memory_limit: str,
            work_dir: Path, reuse: Path | None = None, method: str = "parquet",
            cpus: list[int] | None = None) -> dict:
    """Run one capture in a child process; return its result with peak tree RSS and load averages.

    With ``reuse`` (a dataset that ``to_parquet`` wrote from ``capture``) only the flows stage runs
    (``read_s`` is then empty) and the dataset is kept. With ``cpus`` the child (and what it starts) may run
    on those CPUs only (``sched_setaffinity``), e.g. ``[0]`` for "on one core"."""
    size = capture.stat().st_size
    if reuse is not None:
        from tcpmodels.traces.dataset import open_dataset

        partitions = open_dataset(reuse).partitions
    parts = partitions or max(16, -(-size // (64 << 20)))
    out = reuse if reuse is not None else Path(tempfile.mkdtemp(prefix="streaming-", dir=work_dir)) / "ds"
    load0 = os.getloadavg()
    env = child_env.python_env()
    root = str(child_env.ROOT)
    commit = child_env.git_commit(root)  # before the run: the code the child imports
    t0 = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(capture), str(out), str(parts), str(workers),
                              "1" if check else "0", memory_limit, str(reuse or ""), method], stdout=subprocess.PIPE,
                             text=True, env=env,
                             preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    ps = psutil.Process(child.pid)
    peak = 0
    cpu: dict[int, float] = {}
    peaks: dict[int, int] = {}  # pid -> its own peak RSS
    at_peak: dict[int, int] = {}  # pid -> RSS in the sample where the sum peaked
    while child.poll() is None:
        now: dict[int, int] = {}
        total = _tree_rss(ps, cpu, now)
        for pid, r in now.items():
            peaks[pid] = max(peaks.get(pid, 0), r)
        if total > peak:
            peak, at_peak = total, now
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    stdout = child.stdout.read()
    dataset_bytes = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) if out.exists() else 0
    if reuse is None:
        shutil.rmtree(out.parent, ignore_errors=True)
    if child.returncode != 0:
        raise RuntimeError(f"{capture}: child failed ({child.returncode})")
    res = json.loads([ln for ln in stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])
    load1 = os.getloadavg()
    res.update(capture=str(capture), file_bytes=size, dataset_bytes=dataset_bytes, partitions=parts,
               workers=workers, memory_limit=memory_limit, wall_s=wall, peak_rss_gb=peak / 1e9,
               cpus_allowed=";".join(map(str, cpus)) if cpus else "all",
               cpu_s=sum(cpu.values()),
               load_avg_1min_start=load0[0], load_avg_1min_end=load1[0], load_avg_15min_end=load1[2])
    others = sorted((pid for pid in peaks if pid != child.pid and peaks[pid] >= _SMALL_PROCESS),
                    key=lambda pid: -peaks[pid])
    res.update(peak_rss_driver_gb=peaks.get(child.pid, 0) / 1e9,
               peak_rss_workers_gb=_gb_list(peaks[pid] for pid in others),
               rss_at_peak_gb=_gb_list([at_peak.get(child.pid, 0)]
                                       + sorted((r for pid, r in at_peak.items() if pid != child.pid), reverse=True)),
               commit=commit)
    return res


def append_row(path: Path, row: dict) -> None:
    """Append ``row`` to the CSV at ``path``; columns it adds extend the header (older rows get them empty)."""
    rows: list[dict] = []
    fields: list[str] = []
    if path.exists():
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            fields = list(reader.fieldnames or [])
            rows = list(reader)
    missing = [k for k in row if k not in fields]
    if not path.exists() or missing:
        fields += missing
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields)
            w.writeheader()
            w.writerows(rows + [row])
        return
    with open(path, "a", newline="") as fh:
        csv.DictWriter(fh, fieldnames=fields).writerow(row)


def _versions() -> dict:
    import dask
    import numpy
    import pandas
    import pyarrow

    return {"python": platform.python_version(), "numpy": numpy.__version__, "pandas": pandas.__version__,
            "pyarrow": pyarrow.__version__, "dask": dask.__version__}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="+", type=Path)
    ap.add_argument("--partitions", type=int, default=None, help="default: max(16, one per 64 MiB of file)")
    ap.add_argument("--workers", type=int, default=2, help="local Dask workers (one thread each)")
    ap.add_argument("--memory-limit", default="1.5GB", help="per-worker memory limit given to Dask")
    ap.add_argument("--check", action="store_true", help="also compare with flows(read_pcap(capture))")
    ap.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()), help="where datasets go")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--reuse-dataset", type=Path, default=None,
                    help="a dataset to_parquet wrote from the (single) capture: time only the flows stage")
    ap.add_argument("--method", choices=("parquet", "stream", "dask_stream"), default="parquet",
                    help="parquet: to_parquet + dataset_flows on Dask; stream: stream_flows in one process; "
                         "dask_stream: dask_stream_flows, each connection on one of --workers workers")
    ap.add_argument("--cpus", type=lambda v: [int(c) for c in v.split(",")], default=None,
                    help="CPUs the measured process may use, e.g. 0 (one core) or 0,1 (default: all)")
    args = ap.parse_args(argv)
    machine = {"date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
               "host": platform.node(), "cpus": os.cpu_count(),
               "memory_gb": round(psutil.virtual_memory().total / 1e9, 1), "machine": platform.machine()}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    child_env.warm_bytecode("tcpmodels.traces, tcpmodels.traces.stream, tcpmodels.traces.dataset, pandas, pyarrow, dask")
    for cap in args.captures:
        res = {**machine, **_versions(), **measure(cap, args.partitions, args.workers, args.check,
                                                   args.memory_limit, args.work_dir, args.reuse_dataset,
                                                   args.method, args.cpus)}
        rows.append(res)
    fit = fit_exponent([r["packets"] for r in rows], [r["wall_s"] for r in rows])
    for res in rows:
        res.update(fitted_exponent=fit, fitted_over=";".join(str(r["packets"]) for r in rows))
        append_row(args.results, res)
        print(json.dumps(res))
    if fit is not None:
        print(f"wall time ~ packets^{fit:.3f} over {len(rows)} captures")
    return 0


def fit_exponent(packets: list[int], wall_s: list[float]) -> float | None:
    """Least-squares slope of log(wall time) against log(packets): time ~ packets^slope (None below 2 sizes)."""
    import numpy as np

    if len(set(packets)) < 2:
        return None
    x, y = np.log(np.asarray(packets, float)), np.log(np.asarray(wall_s, float))
    return float(np.polyfit(x, y, 1)[0])


#: The checkout's commit (benchmarks/child_env.py), as the rows record it.
_commit = child_env.git_commit


if __name__ == "__main__":
    sys.exit(main())

"""tcpmodels.traces.cluster: the same calls on an in-process LocalCluster and on a real scheduler + worker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

from tcpmodels.traces import TraceWarning, flows, read_pcap, to_parquet
from tcpmodels.traces.cluster import capture_flows, dask_client, dataset_flows, large_capture_flows

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
CAPS = ROOT / "data" / "captures"
#: Many connections (several partitions busy), and two small ones standing for "one capture per host".
BIG = CAPS / "p5_bottleneck_main-a1.65-n32-b5-s0.pcap.gz"
SMALL = [CAPS / "short_flows_any.pcap.gz", CAPS / "p1_s4_sample.pcap.gz", CAPS / "mptcp_2path.pcapng.gz"]


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return fn(*args, **kw)


def _expected(path: Path) -> pd.DataFrame:
    return _quiet(lambda: flows(read_pcap(path)))


def _check(client=None, scheduler=None, tmp_path=None):
    ds = _quiet(to_parquet, BIG, tmp_path / "ds", partitions=5, chunk_bytes=1 << 16)
    assert len(ds.nonempty()) == 5
    got = _quiet(dataset_flows, ds, client=client, scheduler=scheduler)
    pd.testing.assert_frame_equal(got, _expected(BIG), check_exact=True)
    many = _quiet(capture_flows, SMALL, client=client, scheduler=scheduler)
    assert list(many) == [os.fspath(p) for p in SMALL]
    for p in SMALL:
        table, acc = many[os.fspath(p)]
        pd.testing.assert_frame_equal(table, _expected(p), check_exact=True)
        assert acc["records_read"] == acc["tcp_parsed"] + sum(acc["skipped"].values())


def test_local_cluster_in_process(tmp_path):
    with dask_client(n_workers=2, processes=False) as client:
        _check(client=client, tmp_path=tmp_path)
        flows_, ds = _quiet(large_capture_flows, BIG, tmp_path / "large", client=client, partitions=3)
        pd.testing.assert_frame_equal(flows_, _expected(BIG), check_exact=True)
        assert ds.partitions == 3


def test_warnings_of_tasks_reach_the_caller(tmp_path):
    """A capture whose reading warns (skipped records) warns in the caller, not only on the worker."""
    cap = Path(__file__).resolve().parents[3] / "shared" / "data" / "external_captures" / "tcpdump_kday4.pcap"
    if not cap.exists():
        pytest.skip(f"{cap} not present")
    with warnings.catch_warnings(record=True) as direct:
        warnings.simplefilter("always", TraceWarning)
        read_pcap(cap)
    assert direct, "the capture no longer warns: choose another one"
    with dask_client(n_workers=1, processes=False) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        capture_flows([cap], client=client)
    assert {str(w.message) for w in direct} <= {str(w.message) for w in caught}


def _wait_for(path: Path, proc: subprocess.Popen, timeout_s: float = 60) -> dict:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if path.exists() and path.stat().st_size:
            try:
                return json.loads(path.read_text())
            except json.JSONDecodeError:
                pass
        if proc.poll() is not None:
            raise RuntimeError(f"dask scheduler exited with {proc.returncode}")
        time.sleep(0.2)
    raise TimeoutError(f"no scheduler file {path} after {timeout_s} s")


def test_real_scheduler_and_worker_by_address(tmp_path):
    dask_cli = shutil.which("dask") or str(Path(sys.executable).parent / "dask")
    if not Path(dask_cli).exists():
        pytest.skip("the dask command-line tool is not installed")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    sched_file = tmp_path / "scheduler.json"
    logs = [open(tmp_path / "scheduler.log", "w"), open(tmp_path / "worker.log", "w")]
    procs = [subprocess.Popen([dask_cli, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], stdout=logs[0], stderr=subprocess.STDOUT,
                              env=env)]
    try:
        address = _wait_for(sched_file, procs[0])["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(subprocess.Popen([dask_cli, "worker", address, "--nworkers", "1", "--nthreads", "1",
                                       "--no-dashboard", "--memory-limit", "0"], stdout=logs[1],
                                      stderr=subprocess.STDOUT, env=env, cwd=tmp_path))
        from dask.distributed import Client

        with Client(address) as probe:
            probe.wait_for_workers(1, timeout=60)
        _check(scheduler=address, tmp_path=tmp_path)
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in logs:
            f.close()

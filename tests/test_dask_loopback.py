"""Every Dask cluster the package starts listens on 127.0.0.1 only (issue 50, finding 4).

The sweep's dashboard listened on every interface (``dashboard_address=":0"``), unauthenticated; with worker
threads (``processes=False``) the workers' HTTP endpoint did too, in the sweep and in the trace cluster.
Each test lists the listening TCP sockets of this process (and of worker processes) while the cluster runs.
"""

from __future__ import annotations

import os

import psutil
import pytest

pytest.importorskip("distributed")


def listening(pids) -> set[str]:
    """Addresses (without ports) of the TCP sockets listening in the given processes."""
    found = set()
    for pid in pids:
        for c in psutil.Process(pid).net_connections(kind="tcp"):
            if c.status == psutil.CONN_LISTEN:
                found.add(c.laddr.ip)
    return found


def _with_children() -> list[int]:
    return [os.getpid()] + [p.pid for p in psutil.Process().children(recursive=True)]


def probe(config, out_dir):
    return sorted(listening(_with_children()))


def test_sweep_cluster_listens_on_loopback_only(tmp_path):
    from tcpmodels.sweep import sweep

    result = sweep([{"x": 1}], probe, cache_dir=tmp_path, n_workers=1, processes=False, progress=False)
    (seen,) = result.values
    assert seen and set(seen) <= {"127.0.0.1"}, seen


@pytest.mark.parametrize("processes", [False, True])
def test_trace_cluster_listens_on_loopback_only(processes):
    from tcpmodels.traces.cluster import dask_client

    with dask_client(n_workers=1, processes=processes) as client:
        seen = listening(_with_children())
        assert len(client.scheduler_info()["workers"]) == 1
    assert seen and seen <= {"127.0.0.1"}, seen

"""Packet analysis on Dask: many captures, or one large capture's partitions, on a local cluster or a scheduler.

The same call runs on a :class:`dask.distributed.LocalCluster` started for it (the default)
or on a running scheduler given by its address (``scheduler="tcp://host:8786"``, the
``--scheduler`` option of ``tcpmodels analyze``): no code changes between the two.

- :func:`capture_flows`  one task per capture (one capture per host or run): read + flows.
- :func:`dataset_flows`  one task per partition of a packet dataset (:func:`~tcpmodels.traces.to_parquet`):
  equal to ``flows(read_pcap(capture))``.
- :func:`large_capture_flows`  a capture too large for memory: streamed to a dataset here, then
  :func:`dataset_flows`.

Tasks receive file paths, not data: with a remote scheduler the workers must see the same
files at the same paths (a shared file system). Warnings raised in the tasks
(:class:`~tcpmodels.traces.TraceWarning`) come back and are raised again in the caller.
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from typing import Callable, Iterator

import pandas as pd

from tcpmodels._docstrings import SharedEntries

from .dataset import DEFAULT_PARTITIONS, PacketDataset, open_dataset, to_parquet
from .flows import PartitionFlows, combine_partition_flows, flows, partition_flows
from .pcapfile import MAX_GZIP_EXPANSION
from .reader import read_pcap
from .schema import TraceWarning

__all__ = ["dask_client", "capture_flows", "dataset_flows", "large_capture_flows"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    scheduler : str, optional
        Scheduler address; ``None``: a local cluster (see :func:`dask_client`).
    client : dask.distributed.Client, optional
        An existing client to use instead.
""")


@contextmanager
def dask_client(scheduler: str | None = None, *, n_workers: int | None = None, processes: bool = True,
                memory_limit: str | float | None = "auto") -> Iterator[object]:
    """A :class:`dask.distributed.Client` for ``scheduler``, or for a LocalCluster started (and stopped) here.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler (``"tcp://127.0.0.1:8786"``); ``None`` starts a local cluster.
    n_workers : int, optional
        Local cluster only: worker count (default: one per core, at most 4); one thread each.
    processes : bool
        Local cluster only: workers in processes (True) or threads of this process (False).
    memory_limit : str, float or None
        Local cluster only: per-worker memory limit as Dask takes it (``"auto"``, ``"2GB"``, bytes; ``None``: none).

    Returns
    -------
    contextlib.AbstractContextManager
        Yields the connected :class:`dask.distributed.Client`; closes it (and the local cluster) on exit.
    """
    from dask.distributed import Client, LocalCluster

    if scheduler:
        client = Client(scheduler)
        try:
            yield client
        finally:
            client.close()
        return
    workers = n_workers or max(1, min(os.cpu_count() or 1, 4))
    # no dashboard; the scheduler's HTTP server (health, metrics) on a free port: by default it takes
    # 8787 and, when another cluster on the machine has it, warns (an error under the test suite).
    # Every socket on 127.0.0.1: worker processes bind the host (127.0.0.1 by default); worker threads
    # (processes=False, inproc) would serve their HTTP endpoint on every interface unless given an address.
    loopback = {} if processes else {"worker_dashboard_address": "127.0.0.1:0"}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=None,
                      scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                      memory_limit=memory_limit if memory_limit is not None else 0, **loopback) as cluster, \
            Client(cluster) as client:
        yield client


@contextmanager
def _using(scheduler: str | None, client) -> Iterator[object]:
    if client is not None:
        yield client
    else:
        with dask_client(scheduler) as c:
            yield c


def _recording(fn: Callable, *args) -> tuple[object, list[str]]:
    """Run ``fn(*args)`` on a worker, returning its TraceWarnings as text instead of raising them there."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        out = fn(*args)
    return out, [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]


def _gather(client, futures: list, progress: bool, label: str, keep: Callable | None = None) -> list:
    """Results in submission order, re-raising the tasks' warnings here; a tqdm bar if ``progress``.

    Each result is fetched as soon as its task ends and the future released, so the workers hold
    only the results not yet fetched (gathering all at the end made the workers of a 100M-packet
    capture's 343 partitions exceed their memory limit: restarted, they lost the finished tasks).
    ``keep``, if given, turns each result into what is kept of it as it arrives."""
    from dask.distributed import as_completed

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(futures), desc=label, unit="task")
    position = {f.key: i for i, f in enumerate(futures)}
    results: list = [None] * len(futures)
    for future, result in as_completed(futures, with_results=True):
        value, messages = result
        results[position[future.key]] = (keep(value) if keep is not None else value, messages)
        del result, value
        future.release()
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    out = []
    for value, messages in results:
        for m in messages:
            warnings.warn(m, TraceWarning, stacklevel=3)
        out.append(value)
    return out


def _partition_task(path: str, partition: int) -> pd.DataFrame:
    """One partition's flows on a worker: the dataset was verified whole by the caller; the partition's own files
    are checked again as they are read (:meth:`~tcpmodels.traces.dataset.PacketDataset.read_partition`)."""
    return partition_flows(open_dataset(path, verify=False), partition)


def _capture_task(path: str) -> tuple[pd.DataFrame, dict]:
    table = read_pcap(path)
    return flows(table), table.attrs["accounting"].to_dict()


@_PARAMETERS.fill
def capture_flows(captures: list[str | os.PathLike], *, scheduler: str | None = None, client: object = None,
                  progress: bool = False) -> dict[str, tuple[pd.DataFrame, dict]]:
    """Flow tables of many captures, one Dask task per capture.

    Parameters
    ----------
    captures : list of str or path-like
        Capture files (each must fit in a worker's memory; for one that does not, use
        :func:`large_capture_flows`).
    {scheduler}
    client : dask.distributed.Client, optional
        An existing client to use instead (``scheduler`` is then ignored).
    progress : bool
        Show a progress bar (tqdm) over the tasks.

    Returns
    -------
    dict
        Capture path (as given, as text) -> (``flows(read_pcap(path))``, its read accounting as a dict).
    """
    paths = [os.fspath(c) for c in captures]
    with _using(scheduler, client) as c:
        futures = [c.submit(_recording, _capture_task, os.path.abspath(p), pure=False) for p in paths]
        results = _gather(c, futures, progress, "captures")
    return dict(zip(paths, results))


@_PARAMETERS.fill
def dataset_flows(dataset: PacketDataset | str | os.PathLike, *, scheduler: str | None = None,
                  client: object = None, progress: bool = False) -> pd.DataFrame:
    """:func:`~tcpmodels.traces.flows` of a packet dataset, one Dask task per non-empty partition.

    Parameters
    ----------
    dataset : PacketDataset, str or path-like
        A dataset written by :func:`~tcpmodels.traces.to_parquet` (the workers read its files).
    {scheduler, client}
    progress : bool
        Show a progress bar (tqdm) over the partitions.

    Returns
    -------
    pandas.DataFrame
        Equal to ``flows(read_parquet_dataset(dataset))`` (and to ``flows(read_pcap(capture))``).

    Raises
    ------
    tcpmodels.traces.dataset.DatasetError
        If a file of the dataset is missing, not listed in its metadata, or damaged (naming the file).
    """
    ds = open_dataset(dataset)
    path = os.path.abspath(ds.path)
    with _using(scheduler, client) as c:
        futures = [c.submit(_recording, _partition_task, path, i, pure=False) for i in ds.nonempty()]
        parts = _gather(c, futures, progress, "partitions", keep=PartitionFlows)
    return combine_partition_flows(parts)


@_PARAMETERS.fill
def large_capture_flows(capture: str | os.PathLike, out_dir: str | os.PathLike, *, scheduler: str | None = None,
                        client: object = None, partitions: int | None = None, chunk_bytes: int = 32 << 20,
                        max_gzip_expansion: float | None = MAX_GZIP_EXPANSION,
                        progress: bool = False) -> tuple[pd.DataFrame, PacketDataset]:
    """One capture of any size: streamed to a packet dataset here, then its partitions' flows on Dask.

    Parameters
    ----------
    capture : str or path-like
        The capture file.
    out_dir : str or path-like
        Where the dataset goes (kept: reuse it with :func:`dataset_flows` or ``flows(out_dir)``).
    {scheduler, client}
    partitions : int, optional
        Partitions of the dataset; default: :data:`~tcpmodels.traces.dataset.DEFAULT_PARTITIONS` or
        one per 64 MiB of the file, whichever is more (so that one partition's analysis stays
        well under a gigabyte).
    chunk_bytes : int
        Bytes decoded at once while writing the dataset (sets the writer's memory). [bytes]
    max_gzip_expansion : float or None
        As for :func:`~tcpmodels.traces.read_pcap`. [-]
    progress : bool
        Progress bars (tqdm): file bytes while writing, then partitions.

    Returns
    -------
    tuple
        (flow table as :func:`~tcpmodels.traces.flows` gives it, the :class:`PacketDataset` written).
    """
    if partitions is None:
        partitions = max(DEFAULT_PARTITIONS, -(-os.path.getsize(capture) // (64 << 20)))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        with open(capture, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"  # decompressed size unknown: no total
        bar = tqdm(total=None if gz else os.path.getsize(capture), unit="B", unit_scale=True, desc="reading")
    try:
        ds = to_parquet(capture, out_dir, chunk_bytes=chunk_bytes, partitions=partitions,
                        max_gzip_expansion=max_gzip_expansion, progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    return dataset_flows(ds, scheduler=scheduler, client=client, progress=progress), ds

"""Packet captures -> packet table -> flows and per-flow metrics.

The names below are imported on first use: ``import tcpmodels.traces`` is cheap.

- :func:`read_pcap`  pcap / pcapng (gzip too) -> one packet-table schema (:mod:`.schema`), engines
  ``native`` (numpy), ``tshark`` and ``pyshark``; accounting in ``table.attrs["accounting"]``.
- :func:`to_parquet`, :func:`read_parquet_dataset`, :func:`open_dataset`  captures of any size: the packet
  table as a Parquet dataset partitioned by connection hash, written chunk by chunk (:mod:`.dataset`);
  :func:`flows` accepts it and works one partition at a time (on Dask: :mod:`.cluster`).
- :func:`flows`, :func:`annotate`  one row per TCP connection and direction: counts, retransmissions
  (fast, spurious, out-of-order, plain), duplicate ACKs, RTT, loss, throughput, FCT; per-packet
  analysis columns (:mod:`.annotation`, the layer the others build on).
- :func:`stream_flows`  a capture of any size in one pass: read -> per-connection state -> flow table,
  memory bounded by the live connections (:mod:`.stream`; Dask: :func:`.stream.dask_stream_flows`).
- :func:`rtt_samples`  RTT samples by sequence/ACK matching (Karn) and timestamp echoes.
- :func:`throughput_series`, :func:`bytes_in_flight`, :func:`link_rate_series`, :func:`time_sequence`.
- :func:`mptcp_subflows`  MPTCP v0 and v1 subflows grouped by token (as Wireshark's ``mptcp.stream``),
  bytes and shares, join delay.
- :func:`classify_short_flows`  the four flow patterns of P1 Table 3.
"""

import sys
import types
from importlib import import_module

#: Public name -> the module that defines it. Imported on first use (PEP 562), so that ``import
#: tcpmodels.traces`` costs no numpy, pandas or pyarrow import until something is used.
_EXPORTS = {
    "annotate": "annotation", "DatasetError": "dataset", "PacketDataset": "dataset", "open_dataset": "dataset",
    "read_parquet_dataset": "dataset", "to_parquet": "dataset", "flows": "flows", "mptcp_idsn": "mptcp",
    "mptcp_mappings": "mptcp", "mptcp_subflows": "mptcp", "mptcp_token": "mptcp", "PATTERNS": "patterns",
    "classify_short_flows": "patterns", "CaptureFileError": "pcapfile", "TraceWarning": "reader",
    "read_pcap": "reader", "rtt_samples": "rtt", "COLUMNS": "schema", "ReadAccounting": "schema",
    "bytes_in_flight": "series", "link_rate_series": "series", "throughput_series": "series",
    "time_sequence": "series", "stream_flows": "stream",
}

__all__ = ["read_pcap", "to_parquet", "read_parquet_dataset", "open_dataset", "PacketDataset", "DatasetError",
           "CaptureFileError",
           "TraceWarning", "COLUMNS", "ReadAccounting", "flows", "annotate", "stream_flows", "rtt_samples",
           "mptcp_subflows", "mptcp_mappings", "mptcp_token", "mptcp_idsn", "classify_short_flows", "PATTERNS",
           "throughput_series", "bytes_in_flight", "link_rate_series", "time_sequence"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # next time without this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """This package as a module whose attribute ``flows`` stays the function: importing the submodule
    ``tcpmodels.traces.flows`` (which the import system then sets as the package's attribute of that name,
    after running it) leaves the function :func:`flows` there, as the eager ``from .flows import flows``
    did."""

    def __setattr__(self, name: str, value) -> None:
        if name == "flows" and isinstance(value, types.ModuleType):
            value = value.flows
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

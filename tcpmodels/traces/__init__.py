"""Packet captures -> packet table -> flows and per-flow metrics.

- :func:`read_pcap`  pcap / pcapng (gzip too) -> one packet-table schema (:mod:`.schema`), engines
  ``native`` (numpy), ``tshark`` and ``pyshark``; accounting in ``table.attrs["accounting"]``.
- :func:`to_parquet`, :func:`read_parquet_dataset`, :func:`open_dataset`  captures of any size: the packet
  table as a Parquet dataset partitioned by connection hash, written chunk by chunk (:mod:`.dataset`);
  :func:`flows` accepts it and works one partition at a time (on Dask: :mod:`.cluster`).
- :func:`flows`, :func:`annotate`  one row per TCP connection and direction: counts, retransmissions
  (fast, spurious, out-of-order, plain), duplicate ACKs, RTT, loss, throughput, FCT; per-packet
  analysis columns (:mod:`.annotation`, the layer the others build on).
- :func:`rtt_samples`  RTT samples by sequence/ACK matching (Karn) and timestamp echoes.
- :func:`throughput_series`, :func:`bytes_in_flight`, :func:`link_rate_series`, :func:`time_sequence`.
- :func:`mptcp_subflows`  MPTCP v0 and v1 subflows grouped by token (as Wireshark's ``mptcp.stream``),
  bytes and shares, join delay.
- :func:`classify_short_flows`  the four flow patterns of P1 Table 3.
"""

from .annotation import annotate
from .dataset import DatasetError, PacketDataset, open_dataset, read_parquet_dataset, to_parquet
from .flows import flows
from .mptcp import mptcp_idsn, mptcp_mappings, mptcp_subflows, mptcp_token
from .patterns import PATTERNS, classify_short_flows
from .pcapfile import CaptureFileError
from .reader import TraceWarning, read_pcap
from .rtt import rtt_samples
from .schema import COLUMNS, ReadAccounting
from .series import bytes_in_flight, link_rate_series, throughput_series, time_sequence

__all__ = ["read_pcap", "to_parquet", "read_parquet_dataset", "open_dataset", "PacketDataset", "DatasetError", "CaptureFileError", "TraceWarning", "COLUMNS", "ReadAccounting", "flows", "annotate",
           "rtt_samples", "mptcp_subflows", "mptcp_mappings", "mptcp_token", "mptcp_idsn", "classify_short_flows", "PATTERNS",
           "throughput_series", "bytes_in_flight", "link_rate_series", "time_sequence"]

"""The packet table: one row per TCP segment, the same columns and dtypes whatever engine read the file.

Every engine of :func:`tcpmodels.traces.read_pcap` returns a :class:`pandas.DataFrame`
with exactly the columns below, in this order and with these dtypes (a test checks
that the native and tshark engines agree column by column). Rows are in file order.

Absent values use documented sentinels rather than NaN so that the integer
columns keep their exact width: an option that was not present has its
``has_*`` flag False (or, for MSS and window scale, the value ``-1``).

=====================  ===========  ==========================================================
column                 dtype        meaning [unit]
=====================  ===========  ==========================================================
frame_index            int64        0-based number of the record in the file (all records count)
interface_id           uint16       pcapng interface the packet was captured on (0 for classic pcap)
timestamp_ns           int64        capture time since the Unix epoch, exact [ns]
timestamp_s            float64      the same in seconds (float64: ~0.2 µs resolution today) [s]
wire_bytes             uint32       frame length on the wire (the record's original length) [bytes]
captured_bytes         uint32       bytes stored in the file for this frame [bytes]
ip_version             uint8        4 or 6 (of the inner packet when tunnelled)
tunnel                 category     "" or the outermost tunnel the segment came in: "gre",
                                    "ipip" (IP-in-IP, 6in4, 4in6), "vxlan" (and VXLAN-GPE),
                                    "geneve", "gtp" (GTP-U), "teredo", "l2tp", "mpls" (in UDP)
src_addr, dst_addr     category     IP addresses as text (``"10.0.0.1"``, ``"fd00::1"``)
ip_id                  uint32       IPv4 identification field; 0 for IPv6
src_port, dst_port     uint16       TCP ports
seq, ack               uint32       raw (absolute) sequence and acknowledgment numbers
flags                  uint16       TCP flag bits (FIN=0x01 SYN=0x02 RST=0x04 PSH=0x08 ACK=0x10
                                    URG=0x20 ECE=0x40 CWR=0x80 AE/NS=0x100)
syn, ack_flag, fin,    bool         convenience copies of the flag bits
rst, psh
window                 uint16       raw window field, not scaled [bytes >> window scale]
tcp_header_bytes       uint8        TCP header length including options [bytes]
payload_bytes          uint32       TCP payload length from the IP length fields (not the
                                    captured length, so trimmed captures keep it) [bytes]
mss                    int32        MSS option value, -1 if absent [bytes]
window_scale           int8         window scale shift count, -1 if absent
sack_permitted         bool         SACK-permitted option present
sack_count             uint8        number of SACK blocks in the SACK option (0 if absent)
sack_left, sack_right  uint32       edges of the *first* SACK block (0 if none); the first block
                                    is the most recent one (RFC 2018 Sec. 4), which is what loss
                                    and duplicate-ACK analysis needs; the others are counted only
has_timestamps         bool         timestamps option present
tsval, tsecr           uint32       timestamps option values (0 if absent)
mptcp_subtype          int8         subtype of the first MPTCP option (RFC 8684 Sec. 3), -1 if none:
                                    0 MP_CAPABLE, 1 MP_JOIN, 2 DSS, 3 ADD_ADDR, 4 REMOVE_ADDR,
                                    5 MP_PRIO, 6 MP_FAIL, 7 MP_FASTCLOSE, 8 MP_TCPRST
mptcp_version          int8         MP_CAPABLE: MPTCP version, 0 (RFC 6824) or 1 (RFC 8684); -1 if absent
mptcp_send_key         uint64       MP_CAPABLE: key of the sender of this packet (0 if absent)
mptcp_recv_key         uint64       MP_CAPABLE (third ACK) or MP_FASTCLOSE: key of the receiver (0 if absent)
mptcp_recv_token       uint32       MP_JOIN SYN: token of the receiver's key (0 if absent)
has_mptcp_dsn          bool         DSS carries a data sequence mapping
mptcp_dsn              uint64       DSS data sequence number as sent (4 or 8 bytes on the wire)
mptcp_subflow_seq      uint32       DSS relative subflow sequence number of the mapping
mptcp_data_len         uint16       DSS data-level length of the mapping [bytes]
has_mptcp_data_ack     bool         DSS carries a data ACK
mptcp_data_ack         uint64       DSS data ACK as sent (4 or 8 bytes on the wire)
=====================  ===========  ==========================================================

Accounting
----------
``table.attrs["accounting"]`` is a :class:`ReadAccounting` (a frozen dataclass, also
available as a dict through ``to_dict()``): records read, TCP packets parsed, records
skipped by reason, bytes of a truncated last record, and notes that do not drop a
packet (records longer than the snap length, options cut by the snap length,
timestamps out of order, timestamps before 1970 or after 2100, wire lengths shorter
than the captured length, IP lengths claiming more payload than the frame held).
The invariant ``records_read == tcp_parsed + sum(skipped)``
is checked before the table is returned.

Skip reasons: ``not_ip`` (e.g. ARP), ``not_tcp`` (UDP, ICMP, ...), ``ip_fragment``
(IPv4 fragments and IPv6 fragment headers with a non-zero offset or more-fragments
set, whose datagram was never completed: a fragment missing, or dropped by the
reassembly's time or memory bound, see :mod:`~tcpmodels.traces.fragments`),
``ip_fragment_reassembled`` (the fragments of a reassembled datagram other than the
one that completed it: the datagram is the row of that record, its ``wire_bytes``
and ``captured_bytes`` summed over all its fragments), ``truncated_headers`` (the
captured bytes end before the 20-byte TCP header is complete), ``bad_header`` (an
IP or TCP header field is impossible, e.g. IHL < 5), ``unknown_link_type`` (a
link type this reader does not decode; the warning names it), ``ipsec_esp``
(encrypted, no TCP header visible), ``unrepresentable_timestamp`` (a timestamp
that int64 nanoseconds since 1970 cannot hold: after 2262, e.g. from a corrupt
pcapng ``if_tsresol``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where it is used: streaming a capture's flows starts without it
    import pandas as pd

__all__ = ["COLUMNS", "SKIP_REASONS", "ReadAccounting", "empty_table", "conform"]

#: Column name -> dtype, in table order.
COLUMNS: dict[str, str] = {
    "frame_index": "int64",
    "interface_id": "uint16",
    "timestamp_ns": "int64",
    "timestamp_s": "float64",
    "wire_bytes": "uint32",
    "captured_bytes": "uint32",
    "ip_version": "uint8",
    "tunnel": "category",
    "src_addr": "category",
    "dst_addr": "category",
    "ip_id": "uint32",
    "src_port": "uint16",
    "dst_port": "uint16",
    "seq": "uint32",
    "ack": "uint32",
    "flags": "uint16",
    "syn": "bool",
    "ack_flag": "bool",
    "fin": "bool",
    "rst": "bool",
    "psh": "bool",
    "window": "uint16",
    "tcp_header_bytes": "uint8",
    "payload_bytes": "uint32",
    "mss": "int32",
    "window_scale": "int8",
    "sack_permitted": "bool",
    "sack_count": "uint8",
    "sack_left": "uint32",
    "sack_right": "uint32",
    "has_timestamps": "bool",
    "tsval": "uint32",
    "tsecr": "uint32",
    "mptcp_subtype": "int8",
    "mptcp_version": "int8",
    "mptcp_send_key": "uint64",
    "mptcp_recv_key": "uint64",
    "mptcp_recv_token": "uint32",
    "has_mptcp_dsn": "bool",
    "mptcp_dsn": "uint64",
    "mptcp_subflow_seq": "uint32",
    "mptcp_data_len": "uint16",
    "has_mptcp_data_ack": "bool",
    "mptcp_data_ack": "uint64",
}

#: Flag bits of the ``flags`` column.
FIN, SYN, RST, PSH, ACK, URG, ECE, CWR, AE = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x100

SKIP_REASONS = ("not_ip", "not_tcp", "ip_fragment", "ip_fragment_reassembled", "truncated_headers", "bad_header",
                "unknown_link_type", "ipsec_esp", "unrepresentable_timestamp")

#: Sentinel for absent integer options.
ABSENT = {"mss": -1, "window_scale": -1, "mptcp_subtype": -1, "mptcp_version": -1}


class TraceWarning(UserWarning):
    """Something in a capture was skipped or looks wrong; the message names it and counts it."""


@dataclass(frozen=True, kw_only=True)
class ReadAccounting:
    """What happened to every record of a capture file.

    Attributes
    ----------
    path : str
        The file read.
    engine : str
        ``"native"``, ``"tshark"`` or ``"pyshark"``.
    records_read : int
        Packet records in the file (pcapng: enhanced, simple and obsolete packet blocks).
    tcp_parsed : int
        Rows of the packet table.
    skipped : dict
        Records not in the table, by reason (see the module docstring).
    truncated_tail_bytes : int
        Bytes at the end of the file that do not form a whole record. [bytes]
    notes : dict
        Counts of conditions that keep the packet but deserve a look:
        ``longer_than_snaplen``, ``options_truncated``, ``timestamps_out_of_order``.
    link_types : tuple
        Link-layer header types seen (numbers as in the tcpdump.org LINKTYPE list).
    """

    path: str
    engine: str
    records_read: int
    tcp_parsed: int
    skipped: dict = field(default_factory=dict)
    truncated_tail_bytes: int = 0
    notes: dict = field(default_factory=dict)
    link_types: tuple = ()

    def __post_init__(self) -> None:
        total = self.tcp_parsed + sum(self.skipped.values())
        if total != self.records_read:
            raise AssertionError(
                f"{self.path}: accounting broken: read {self.records_read} records but "
                f"parsed {self.tcp_parsed} + skipped {sum(self.skipped.values())} = {total}"
            )

    def to_dict(self) -> dict:
        """The accounting as a plain dict.

        Returns
        -------
        dict
            Field name -> value (nested dicts for ``skipped`` and ``notes``).
        """
        return asdict(self)


def empty_table() -> pd.DataFrame:
    """A packet table with no rows and the schema's dtypes.

    Returns
    -------
    pandas.DataFrame
        Zero rows, the columns and dtypes of :data:`COLUMNS`.
    """
    return conform({name: np.zeros(0, dtype="object" if dt == "category" else dt) for name, dt in COLUMNS.items()})


def conform(columns: dict) -> pd.DataFrame:
    """Build a packet table from a dict of column arrays, casting to the schema's dtypes.

    Parameters
    ----------
    columns : dict
        Column name -> array (all of :data:`COLUMNS`, no others; categories as values).

    Returns
    -------
    pandas.DataFrame
        The columns in schema order with the schema's dtypes.

    Raises
    ------
    KeyError
        If a schema column is missing (names it) or an unknown column is given.
    """
    import pandas as pd
    missing = [c for c in COLUMNS if c not in columns]
    extra = [c for c in columns if c not in COLUMNS]
    if missing or extra:
        raise KeyError(f"packet table columns do not match the schema: missing {missing}, unknown {extra}")
    data = {}
    for name, dtype in COLUMNS.items():
        values = columns[name]
        if dtype == "category":
            data[name] = pd.Categorical(values)
        else:
            data[name] = np.asarray(values).astype(dtype, copy=False)
    return pd.DataFrame(data, copy=False)  # no consolidating copy of every column (one block per column)

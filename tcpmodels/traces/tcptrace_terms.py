"""tcptrace's retransmission counter in the terms of :func:`~tcpmodels.traces.annotate`.

tcptrace (6.6, ``-l``) counts as ``rexmt_data_pkts`` every segment of SYN, FIN or data that does not advance its
direction's highest sequence number and was seen before, and as ``outoforder_pkts`` the ones never seen before;
a segment that advances the highest sequence number is new to it whatever the peer had acknowledged. So its
``rexmt_data_pkts + outoforder_pkts`` is our retransmissions

- plus what we call duplicates (a packet captured twice), keep-alives and zero-window probes, when they occupy
  sequence space and are not retransmissions;
- less our spurious retransmissions that start at or beyond the highest sequence number seen so far (payload the
  peer had acknowledged, its original not captured: Wireshark's spurious retransmission, tcptrace's new data).

The benchmark ``benchmarks/flows_peers.py`` and the corpus tests compare tcptrace's counts with this one.

References
----------
.. [1] S. Ostermann, tcptrace manual, "Long output" (``rexmt data pkts``, ``outoforder pkts``), http://www.tcptrace.org/manual/
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["tcptrace_rexmt"]


def tcptrace_rexmt(an: pd.DataFrame) -> pd.Series:
    """Per flow, tcptrace's ``rexmt_data_pkts + outoforder_pkts`` from our annotation (module notes).

    Parameters
    ----------
    an : pandas.DataFrame
        :func:`~tcpmodels.traces.annotate` of a packet table, in capture order (its rows in the order they were
        captured, as :func:`~tcpmodels.traces.read_pcap` returns them).

    Returns
    -------
    pandas.Series
        Segments [-] indexed by ``flow_id`` (every flow of ``an``).
    """
    import pandas as pd

    fid = an["flow_id"].to_numpy()
    seq, end = an["seq_u"].to_numpy(), an["seq_end_u"].to_numpy()
    occupies = end > seq
    retrans = an["is_retransmission"].to_numpy()
    extra = (an["is_keepalive"] | an["is_duplicate"] | an["is_zero_window_probe"]).to_numpy() & occupies & ~retrans
    # the highest sequence number before each row, over the segments of its flow that occupy sequence space
    order = np.argsort(fid, kind="stable")
    ends = pd.Series(np.where(occupies, end, np.iinfo(np.int64).min)[order])
    high = ends.groupby(fid[order]).cummax().groupby(fid[order]).shift(1).to_numpy()
    advancing = np.empty(len(fid), bool)
    advancing[order] = np.isnan(high) | (seq[order] >= high)
    counted = retrans & ~(an["is_spurious_retransmission"].to_numpy() & advancing)
    return pd.Series(counted | extra).groupby(fid).sum()

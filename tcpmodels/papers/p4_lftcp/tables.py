"""P4's dataset (the path's parameters) and its sizing tables, in SI units, with display views in readable units."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.models.bdp import (
    WSCALE_SHIFT_MAX,
    bdp_bytes,
    max_window_bytes,
    max_window_ceiling_bps,
    min_wscale_shift,
    sizing_table,
    window_needed_bytes,
)
from tcpmodels.models.throughput import mathis_loss_rate, window_limited_throughput_bps
from tcpmodels.papers.common import Comparison, comparison_frame
from tcpmodels.papers.display import human
from tcpmodels.papers.p4_lftcp.constants import (
    C_M_PER_S,
    ETHERNET_OVERHEAD_BYTES,
    FIBRE_INDEX,
    FRACTION_HALF_UNIT,
    IN_FLIGHT_LIMIT_BYTES,
    IP_TCP_TS_HEADER_BYTES,
    LFTCP_RATE_BPS,
    LINK_RATE_BPS,
    RATE_HALF_UNIT_BPS,
    ROUND_TRIP_DISTANCE_M,
    RTT_S,
    STANDARD_TCP_FRACTION_OF_THEORY,
    STANDARD_TCP_RATE_BPS,
)

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    rtt_s : float
        Round-trip time. [s]
""")


@_PARAMETERS.fill
@dataclass(frozen=True, kw_only=True)
class P4Dataset:
    """The path P4 is about: the press release's values, nothing measured.

    Attributes
    ----------
    link_rate_bps : float
        Path rate. [bit/s]
    {rtt_s}
    rates_bps, rtts_s : tuple of float
        Grid of the general sizing table. [bit/s], [s]
    provenance : dict
        Where the numbers come from.
    """

    link_rate_bps: float = LINK_RATE_BPS
    rtt_s: float = RTT_S
    rates_bps: tuple[float, ...] = (1e9, 10e9, 40e9, 100e9)
    rtts_s: tuple[float, ...] = (0.001, 0.01, 0.05, 0.1, 0.2, RTT_S)
    provenance: dict = field(default_factory=lambda: {"source": "press release, 11 Dec 2015", "measured": False})


def load_dataset(data_dir: str | Path | None = None) -> P4Dataset:
    """The press release's path (``data_dir`` is accepted for the common contract and not read: P4 has no data files).

    Parameters
    ----------
    data_dir : str or Path, optional
        Ignored.

    Returns
    -------
    P4Dataset
        The defaults: 100 Gbit/s link, the release's RTT, the sizing grid's rates and RTTs.
    """
    return P4Dataset()


@_PARAMETERS.fill
def path_table(
    link_rate_bps: float = LINK_RATE_BPS,
    rtt_s: float = RTT_S,
    *,
    mss_bytes: float = 9000 - IP_TCP_TS_HEADER_BYTES,
) -> pd.DataFrame:
    """Sizing of one path: BDP, TCP's window ceiling, in-flight bytes of the reported rates.

    Parameters
    ----------
    link_rate_bps : float
        Link rate. [bit/s]
    {rtt_s}
    mss_bytes : float, default 8948
        Segment size for the loss-rate row (9000-byte jumbo MTU minus IPv4, TCP
        and timestamp headers; the release does not state the MTU). [bytes]

    Returns
    -------
    pandas.DataFrame
        Columns ``quantity, value, unit, how``; values in SI units (bytes, bit/s, s).
    """
    ceiling = max_window_ceiling_bps(WSCALE_SHIFT_MAX, rtt_s)
    wrap_s = 2.0**32 * 8.0 / LFTCP_RATE_BPS
    loss73 = mathis_loss_rate(LFTCP_RATE_BPS, mss_bytes, rtt_s)
    rows = [
        ("link rate", link_rate_bps, "bit/s", "press release"),
        ("RTT", rtt_s, "s", "press release"),
        ("BDP", bdp_bytes(link_rate_bps, rtt_s), "bytes", "rate * RTT / 8"),
        ("largest TCP window (shift 14)", max_window_bytes(WSCALE_SHIFT_MAX), "bytes", "65535 * 2^14 (RFC 7323)"),
        ("window ceiling at RTT", ceiling, "bit/s", "largest window / RTT"),
        ("share of link rate reachable", min(1.0, ceiling / link_rate_bps), "-", "ceiling / link rate"),
        ("window shift needed to fill link", min_wscale_shift(link_rate_bps, rtt_s), "-", "ceil(log2(BDP / 65535)), max allowed 14"),
        ("in flight at 29 Gbit/s", window_needed_bytes(STANDARD_TCP_RATE_BPS, rtt_s), "bytes", "29 Gbit/s * RTT / 8"),
        ("in flight at 73 Gbit/s", window_needed_bytes(LFTCP_RATE_BPS, rtt_s), "bytes", "73 Gbit/s * RTT / 8"),
        ("window shift needed for 73 Gbit/s", min_wscale_shift(LFTCP_RATE_BPS, rtt_s), "-", "ceil(log2(in flight / 65535))"),
        ("sequence-space wrap time at 73 Gbit/s", wrap_s, "s", "2^32 B * 8 / 73 Gbit/s (PAWS, RFC 7323 Sec. 5, is required)"),
        (
            "Reno loss rate that sustains 73 Gbit/s (Mathis)",
            loss73,
            "-",
            f"p = (sqrt(3/2) * MSS * 8 / (RTT * rate))^2 with MSS {mss_bytes:g} B",
        ),
        (
            "Reno time between losses at 73 Gbit/s (Mathis)",
            mss_bytes * 8.0 / (loss73 * LFTCP_RATE_BPS),
            "s",
            "1 / (p * segments per second)",
        ),
        (
            "theoretical rate implied by 29 Gbit/s = 97.7 %",
            STANDARD_TCP_RATE_BPS / STANDARD_TCP_FRACTION_OF_THEORY,
            "bit/s",
            "29 / 0.977",
        ),
        (
            "RTT that would make the largest window give that rate",
            max_window_bytes(WSCALE_SHIFT_MAX) * 8.0 * STANDARD_TCP_FRACTION_OF_THEORY / STANDARD_TCP_RATE_BPS,
            "s",
            "window * 8 / (29 / 0.977 Gbit/s)",
        ),
        (
            "window that would give that rate at the RTT",
            window_needed_bytes(STANDARD_TCP_RATE_BPS / STANDARD_TCP_FRACTION_OF_THEORY, rtt_s),
            "bytes",
            "(29 / 0.977 Gbit/s) * RTT / 8",
        ),
        (
            "fibre propagation RTT over 2 x 21,153 km",
            2.0 * ROUND_TRIP_DISTANCE_M * FIBRE_INDEX / C_M_PER_S,
            "s",
            "data loop Austin-Tokyo-Austin plus the ACKs' loop, n = 1.468; a lower bound, real routes are longer",
        ),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value", "unit", "how"])


@_PARAMETERS.fill
def in_flight_table(
    rtt_s: float = RTT_S,
    rates_bps: Sequence[float] = (STANDARD_TCP_RATE_BPS, LFTCP_RATE_BPS, LINK_RATE_BPS),
) -> pd.DataFrame:
    """Bytes in flight each rate needs, against the limits a 32-bit design imposes.

    Limits: the largest advertisable TCP window (65,535 x 2^14 B, RFC 7323),
    2^30 B (1 GiB), 2^31 - 1 B (largest signed 32-bit integer; Linux keeps
    socket buffer sizes in ``int``) and 2^32 B (unsigned 32-bit, the size of
    TCP's sequence space).

    Parameters
    ----------
    {rtt_s}
    rates_bps : sequence of float
        Rates to size; default the two reported rates and the link rate. [bit/s]

    Returns
    -------
    pandas.DataFrame
        One row per (rate, limit): ``rate_bps, needed_bytes, limit, limit_bytes,
        needed_over_limit, fits, limit_ceiling_bps`` (the rate that limit allows at ``rtt_s``).
    """
    limits = {
        "largest TCP window 65535*2^14": max_window_bytes(WSCALE_SHIFT_MAX),
        "2^30 (1 GiB)": 2.0**30,
        "2^31 - 1 (signed 32-bit)": 2.0**31 - 1,
        "2^32 (unsigned 32-bit, sequence space)": 2.0**32,
    }
    rows = []
    for rate in rates_bps:
        needed = window_needed_bytes(rate, rtt_s)
        for name, limit in limits.items():
            rows.append(
                {
                    "rate_bps": float(rate),
                    "needed_bytes": needed,
                    "limit": name,
                    "limit_bytes": float(limit),
                    "needed_over_limit": needed / limit,
                    "fits": bool(needed <= limit),
                    "limit_ceiling_bps": window_limited_throughput_bps(limit, rtt_s),
                }
            )
    return pd.DataFrame(rows)


def ratio_candidates(rtt_s: float = RTT_S) -> pd.DataFrame:
    """Candidate readings of "29 Gbit/s is 97.7 % of the theoretical value".

    Each row is one way to compute a theoretical value (or an efficiency) from
    what the release and the standards state. ``fraction`` is 29 Gbit/s over that
    value; ``fraction_low`` and ``fraction_high`` use 28.5 and 29.5 Gbit/s, the
    range the printed integer "29" stands for. ``consistent_with_97_7`` is true
    when that range overlaps 97.65-97.75 %, the range "97.7 %" stands for: the
    reading is then *possible*, not derived, and ``rate_for_97_7_bps`` is the
    unrounded measured rate it would require (0.977 x theoretical).

    Parameters
    ----------
    rtt_s : float
        Round-trip time of the window-limited candidates. [s]

    Returns
    -------
    pandas.DataFrame
        Columns ``candidate, theoretical_bps, fraction, fraction_low, fraction_high,
        consistent_with_97_7, rate_for_97_7_bps``.
    """
    window14 = max_window_bytes(WSCALE_SHIFT_MAX)
    jumbo_payload = 9000 - IP_TCP_TS_HEADER_BYTES
    std_payload = 1500 - IP_TCP_TS_HEADER_BYTES
    ceil14 = window_limited_throughput_bps(window14, rtt_s)
    rates = {
        "largest TCP window 65535*2^14 B / RTT": ceil14,
        "2^30 B / RTT": window_limited_throughput_bps(2.0**30, rtt_s),
        "'1 GB' read as 10^9 B / RTT": window_limited_throughput_bps(IN_FLIGHT_LIMIT_BYTES, rtt_s),
        "(2^31 - 1) B / RTT (signed 32-bit buffer)": window_limited_throughput_bps(2.0**31 - 1, rtt_s),
        "largest window / RTT, as wire rate with 9000 B jumbo frames": ceil14 * (9000 + ETHERNET_OVERHEAD_BYTES) / jumbo_payload,
        "largest window / RTT, as wire rate with 1500 B frames": ceil14 * (1500 + ETHERNET_OVERHEAD_BYTES) / std_payload,
        "largest window / RTT, payload share of 9000 B jumbo frames": ceil14 * jumbo_payload / (9000 + ETHERNET_OVERHEAD_BYTES),
        "largest window / RTT, payload share of 1500 B frames": ceil14 * std_payload / (1500 + ETHERNET_OVERHEAD_BYTES),
        "link rate 100 Gbit/s": LINK_RATE_BPS,
    }
    rows = []
    for name, theory in rates.items():
        fraction = STANDARD_TCP_RATE_BPS / theory
        low = (STANDARD_TCP_RATE_BPS - RATE_HALF_UNIT_BPS) / theory
        high = (STANDARD_TCP_RATE_BPS + RATE_HALF_UNIT_BPS) / theory
        rows.append((name, theory, fraction, low, high))
    # Pure efficiencies, compared with 0.977 directly (no rounding range of the 29).
    for name, eff in {
        "payload / wire bytes, 9000 B jumbo frames": jumbo_payload / (9000 + ETHERNET_OVERHEAD_BYTES),
        "payload / wire bytes, 1500 B frames": std_payload / (1500 + ETHERNET_OVERHEAD_BYTES),
        "payload / IP packet, 9000 B MTU": jumbo_payload / 9000,
        "payload / IP packet, 1500 B MTU": std_payload / 1500,
    }.items():
        rows.append((name, np.nan, eff, eff, eff))
    frame = pd.DataFrame(rows, columns=["candidate", "theoretical_bps", "fraction", "fraction_low", "fraction_high"])
    target_low = STANDARD_TCP_FRACTION_OF_THEORY - FRACTION_HALF_UNIT
    target_high = STANDARD_TCP_FRACTION_OF_THEORY + FRACTION_HALF_UNIT
    frame["consistent_with_97_7"] = (frame.fraction_high >= target_low) & (frame.fraction_low <= target_high)
    frame["rate_for_97_7_bps"] = frame.theoretical_bps * STANDARD_TCP_FRACTION_OF_THEORY
    return frame


def _comparisons(link_rate_bps: float, rtt_s: float) -> pd.DataFrame:
    ceiling = max_window_ceiling_bps(WSCALE_SHIFT_MAX, rtt_s)
    return comparison_frame(
        [
            Comparison(
                quantity="standard TCP limit on the path",
                paper=STANDARD_TCP_RATE_BPS / 1e9,
                ours=ceiling / 1e9,
                unit="Gbit/s",
                note="paper: measured and called the limit; ours: 65535*2^14 B / RTT",
            ),
            Comparison(
                quantity="data in flight at once, standard TCP",
                paper=IN_FLIGHT_LIMIT_BYTES / 1e9,
                ours=max_window_bytes(WSCALE_SHIFT_MAX) / 1e9,
                unit="GB (10^9 B)",
                note="paper: '1 GB' (note 2); ours: largest advertisable window",
            ),
            Comparison(
                quantity="29 Gbit/s as a share of the theoretical value",
                paper=STANDARD_TCP_FRACTION_OF_THEORY * 100,
                ours=STANDARD_TCP_RATE_BPS / ceiling * 100,
                unit="%",
                note="ours: 29 Gbit/s / window ceiling; see ratio_candidates for other readings",
            ),
            Comparison(
                quantity="BDP of the path",
                paper=np.nan,
                ours=bdp_bytes(link_rate_bps, rtt_s) / 1e9,
                unit="GB (10^9 B)",
                note="not printed in the release",
            ),
            Comparison(
                quantity="in flight needed for 73 Gbit/s",
                paper=np.nan,
                ours=window_needed_bytes(LFTCP_RATE_BPS, rtt_s) / 1e9,
                unit="GB (10^9 B)",
                note="not printed; exceeds the 1 GB limit the release names",
            ),
            Comparison(
                quantity="LFTCP rate / standard TCP limit",
                paper=np.nan,
                ours=LFTCP_RATE_BPS / ceiling,
                unit="-",
                note="release: 'more than twice' (2倍を超える)",
            ),
        ]
    )


def tables(dataset: P4Dataset, *, quick: bool = False, seed: int = 0) -> dict[str, pd.DataFrame]:
    """All tables of the P4 reproduction.

    Parameters
    ----------
    dataset : P4Dataset
        The path (:func:`load_dataset`, or a ``P4Dataset`` with other values).
    quick, seed
        Part of the common contract; nothing here is sampled, so both change nothing.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``paper_vs_ours`` (printed numbers beside ours), ``path`` (sizing of the
        path), ``in_flight`` (bytes needed against 32-bit limits), ``sizing``
        (:func:`tcpmodels.models.bdp.sizing_table` over the grid) and
        ``ratio_97_7`` (:func:`ratio_candidates`).
    """
    if not isinstance(dataset, P4Dataset):
        raise TypeError(f"dataset must be a P4Dataset (see load_dataset); got {type(dataset).__name__}")
    link_rate_bps, rtt_s = dataset.link_rate_bps, dataset.rtt_s
    return {
        "paper_vs_ours": _comparisons(link_rate_bps, rtt_s),
        "path": path_table(link_rate_bps, rtt_s),
        "in_flight": in_flight_table(rtt_s),
        "sizing": sizing_table(dataset.rates_bps, dataset.rtts_s),
        "ratio_97_7": ratio_candidates(rtt_s),
    }


def views(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The tables of :func:`tables` in readable units (Gbit/s, GB, ms, %), as strings: for display only.

    Keys ``path``, ``in_flight``, ``sizing``, ``ratio_97_7``, ``paper_vs_ours``.

    Parameters
    ----------
    tables : dict of str to pandas.DataFrame
        :func:`tables`' result (at least those five keys).

    Returns
    -------
    dict of str to pandas.DataFrame
        The same keys; numbers as text via :func:`tcpmodels.papers.display.human` (4 significant
        digits) and shares as percentages.
    """
    path = tables["path"]
    out = {"path": pd.DataFrame({"quantity": path["quantity"],
                                 "value": [human(v, u) for v, u in zip(path["value"], path["unit"])],
                                 "how": path["how"]})}
    f = tables["in_flight"]
    out["in_flight"] = pd.DataFrame({
        "rate": [human(x, "bit/s") for x in f["rate_bps"]], "needed": [human(x, "bytes") for x in f["needed_bytes"]],
        "limit": f["limit"], "limit bytes": [human(x, "bytes") for x in f["limit_bytes"]],
        "needed / limit": [f"{x:.2f}" for x in f["needed_over_limit"]], "fits": f["fits"],
        "ceiling of the limit": [human(x, "bit/s") for x in f["limit_ceiling_bps"]]})
    z = tables["sizing"]
    out["sizing"] = pd.DataFrame({
        "link": [human(x, "bit/s") for x in z["rate_bps"]], "RTT": [human(x, "s") for x in z["rtt_s"]],
        "BDP": [human(x, "bytes") for x in z["bdp_bytes"]], "shift needed": z["min_wscale_shift"].astype(int),
        "shift <= 14": z["wscale_sufficient"], "ceiling": [human(x, "bit/s") for x in z["ceiling_bps"]],
        "share of link": [f"{x:.1%}" for x in z["achievable_fraction"]]})
    r = tables["ratio_97_7"]
    out["ratio_97_7"] = pd.DataFrame({
        "candidate": r["candidate"], "theoretical": [human(x, "bit/s") for x in r["theoretical_bps"]],
        "29 Gbit/s is": [f"{x:.2%}" for x in r["fraction"]],
        "range for 28.5-29.5": [f"{a:.2%}-{b:.2%}" for a, b in zip(r["fraction_low"], r["fraction_high"])],
        "consistent with 97.7 %": r["consistent_with_97_7"],
        "rate it needs": [human(x, "bit/s") for x in r["rate_for_97_7_bps"]]})
    c = tables["paper_vs_ours"]
    out["paper_vs_ours"] = c.assign(paper=[f"{x:.4g}" if x == x else "" for x in c["paper"]],
                                    ours=[f"{x:.4g}" for x in c["ours"]],
                                    rel_diff=[f"{x:+.2%}" if x == x else "" for x in c["rel_diff"]])
    return out

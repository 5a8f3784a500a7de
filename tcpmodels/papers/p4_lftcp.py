"""P4: LFTCP, 73 Gbit/s in one TCP stream over a 296 ms, 100 Gbit/s path (University of Tokyo, 2015).

Source: University of Tokyo (Graduate School of Information Science and
Technology) and JST, press release of 11 December 2015 (平成27年12月11日),
"100ギガビットネットワークを高効率利用するTCP通信技術を確立 — 日米間100ギガビット
ネットワークを用い73ギガビット/秒のTCP通信を実現" (presenter: Kei Hiraki);
text in ``shared/seeds/003_*.txt``, digest in ``shared/PAPERS.md`` (P4).

The press release reports measurements we cannot repeat (a trans-Pacific
100 Gbit/s loop), so what is reproduced is its arithmetic: the bandwidth-delay
product, the rate ceiling that TCP's largest window sets at 296 ms, the bytes
in flight 73 Gbit/s needs against 32-bit limits, the same sizing for other
links and RTTs, and whether the printed "97.7 % of the theoretical value" can
be derived from the printed numbers. No dataset is needed: :func:`tables` and
:func:`claims` take the path's parameters, with the press release's values as
defaults.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

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
from tcpmodels.papers.common import Claim, Comparison, claims_frame, comparison_frame

__all__ = [
    "CITATION",
    "LINK_RATE_BPS",
    "RTT_S",
    "ROUND_TRIP_DISTANCE_M",
    "STANDARD_TCP_RATE_BPS",
    "STANDARD_TCP_FRACTION_OF_THEORY",
    "LFTCP_RATE_BPS",
    "IN_FLIGHT_LIMIT_BYTES",
    "tables",
    "claims",
    "ratio_candidates",
    "in_flight_table",
    "path_table",
    "plot_ceiling_vs_rtt",
]

CITATION = (
    "University of Tokyo and JST, press release, 11 Dec 2015: "
    "'100ギガビットネットワークを高効率利用するTCP通信技術を確立 — "
    "日米間100ギガビットネットワークを用い73ギガビット/秒のTCP通信を実現' (K. Hiraki et al.)"
)

# --- Facts printed in the press release (section numbers of the release) -------------------
#: Every link of the looped path is 100 Gbit/s ("この経路は全て100ギガビットネットワーク", Sec. 4). [bit/s]
LINK_RATE_BPS = 100e9
#: Round-trip time of the experiment's path ("往復遅延時間は296ミリ秒", Sec. 4). [s]
RTT_S = 0.296
#: Austin-Tokyo round-trip distance ("往復距離は21,153km", Sec. 4). [m]
ROUND_TRIP_DISTANCE_M = 21_153e3
#: Standard TCP's rate and limit on this network ("29ギガビット/秒", Sec. 3 and 4). [bit/s]
STANDARD_TCP_RATE_BPS = 29e9
#: "理論値の97.7%" (Sec. 4): the 29 Gbit/s as a fraction of a theoretical value the text does not give. [-]
STANDARD_TCP_FRACTION_OF_THEORY = 0.977
#: LFTCP's single-stream rate ("73ギガビット/秒", title and Sec. 4). [bit/s]
LFTCP_RATE_BPS = 73e9
#: Data in flight at once is limited to 1 GB in standard TCP ("1ギガバイトに制限", note 2, Fig. 6). [bytes]
IN_FLIGHT_LIMIT_BYTES = 1e9

# --- Printing precision used to judge agreement ---------------------------------------------
#: 29 and 73 Gbit/s are printed as integers: half a unit of the last digit. [bit/s]
_RATE_HALF_UNIT_BPS = 0.5e9
#: 97.7 % is printed with one decimal of a percent. [-]
_FRACTION_HALF_UNIT = 0.0005

# --- Facts from standards and common practice, used in the candidate explanations -----------
#: Ethernet per-frame overhead on the wire: header 14 + FCS 4 + preamble/SFD 8 + inter-frame gap 12. [bytes]
_ETHERNET_OVERHEAD_BYTES = 38
#: IPv4 (20) + TCP (20) + TCP timestamp option (12, RFC 7323, on by default in Linux). [bytes]
_IP_TCP_TS_HEADER_BYTES = 52
#: Speed of light in vacuum and a typical group index of single-mode fibre (about 1.468 at 1550 nm).
_C_M_PER_S = 299_792_458.0
_FIBRE_INDEX = 1.468


def path_table(
    link_rate_bps: float = LINK_RATE_BPS,
    rtt_s: float = RTT_S,
    *,
    mss_bytes: float = 9000 - _IP_TCP_TS_HEADER_BYTES,
) -> pd.DataFrame:
    """Sizing of one path: BDP, TCP's window ceiling, in-flight bytes of the reported rates.

    Parameters
    ----------
    link_rate_bps : float
        Link rate. [bit/s]
    rtt_s : float
        Round-trip time. [s]
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
            2.0 * ROUND_TRIP_DISTANCE_M * _FIBRE_INDEX / _C_M_PER_S,
            "s",
            "data loop Austin-Tokyo-Austin plus the ACKs' loop, n = 1.468; a lower bound, real routes are longer",
        ),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value", "unit", "how"])


def in_flight_table(
    rtt_s: float = RTT_S,
    rates_bps: Sequence[float] = (STANDARD_TCP_RATE_BPS, LFTCP_RATE_BPS, LINK_RATE_BPS),
) -> pd.DataFrame:
    """Bytes in flight each rate needs, against the limits a 32-bit design imposes.

    Limits: the largest advertisable TCP window (65,535 x 2^14 B, RFC 7323),
    2^30 B (1 GiB), 2^31 - 1 B (largest signed 32-bit integer; Linux keeps
    socket buffer sizes in ``int``) and 2^32 B (unsigned 32-bit, the size of
    TCP's sequence space).

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

    Returns
    -------
    pandas.DataFrame
        Columns ``candidate, theoretical_bps, fraction, fraction_low, fraction_high,
        consistent_with_97_7, rate_for_97_7_bps``.
    """
    window14 = max_window_bytes(WSCALE_SHIFT_MAX)
    jumbo_payload = 9000 - _IP_TCP_TS_HEADER_BYTES
    std_payload = 1500 - _IP_TCP_TS_HEADER_BYTES
    ceil14 = window_limited_throughput_bps(window14, rtt_s)
    rates = {
        "largest TCP window 65535*2^14 B / RTT": ceil14,
        "2^30 B / RTT": window_limited_throughput_bps(2.0**30, rtt_s),
        "'1 GB' read as 10^9 B / RTT": window_limited_throughput_bps(IN_FLIGHT_LIMIT_BYTES, rtt_s),
        "(2^31 - 1) B / RTT (signed 32-bit buffer)": window_limited_throughput_bps(2.0**31 - 1, rtt_s),
        "largest window / RTT, as wire rate with 9000 B jumbo frames": ceil14 * (9000 + _ETHERNET_OVERHEAD_BYTES) / jumbo_payload,
        "largest window / RTT, as wire rate with 1500 B frames": ceil14 * (1500 + _ETHERNET_OVERHEAD_BYTES) / std_payload,
        "largest window / RTT, payload share of 9000 B jumbo frames": ceil14 * jumbo_payload / (9000 + _ETHERNET_OVERHEAD_BYTES),
        "largest window / RTT, payload share of 1500 B frames": ceil14 * std_payload / (1500 + _ETHERNET_OVERHEAD_BYTES),
        "link rate 100 Gbit/s": LINK_RATE_BPS,
    }
    rows = []
    for name, theory in rates.items():
        fraction = STANDARD_TCP_RATE_BPS / theory
        low = (STANDARD_TCP_RATE_BPS - _RATE_HALF_UNIT_BPS) / theory
        high = (STANDARD_TCP_RATE_BPS + _RATE_HALF_UNIT_BPS) / theory
        rows.append((name, theory, fraction, low, high))
    # Pure efficiencies, compared with 0.977 directly (no rounding range of the 29).
    for name, eff in {
        "payload / wire bytes, 9000 B jumbo frames": jumbo_payload / (9000 + _ETHERNET_OVERHEAD_BYTES),
        "payload / wire bytes, 1500 B frames": std_payload / (1500 + _ETHERNET_OVERHEAD_BYTES),
        "payload / IP packet, 9000 B MTU": jumbo_payload / 9000,
        "payload / IP packet, 1500 B MTU": std_payload / 1500,
    }.items():
        rows.append((name, np.nan, eff, eff, eff))
    frame = pd.DataFrame(rows, columns=["candidate", "theoretical_bps", "fraction", "fraction_low", "fraction_high"])
    target_low = STANDARD_TCP_FRACTION_OF_THEORY - _FRACTION_HALF_UNIT
    target_high = STANDARD_TCP_FRACTION_OF_THEORY + _FRACTION_HALF_UNIT
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


def tables(
    link_rate_bps: float = LINK_RATE_BPS,
    rtt_s: float = RTT_S,
    *,
    rates_bps: Sequence[float] = (1e9, 10e9, 40e9, 100e9),
    rtts_s: Sequence[float] = (0.001, 0.01, 0.05, 0.1, 0.2, RTT_S),
) -> dict[str, pd.DataFrame]:
    """All tables of the P4 reproduction.

    Parameters
    ----------
    link_rate_bps : float, default 100e9
        Rate of the Tokyo-Austin path. [bit/s]
    rtt_s : float, default 0.296
        Its round-trip time. [s]
    rates_bps, rtts_s : sequences of float
        Grid of the general sizing table. [bit/s], [s]

    Returns
    -------
    dict of str to pandas.DataFrame
        ``paper_vs_ours`` (printed numbers beside ours), ``path`` (sizing of the
        path), ``in_flight`` (bytes needed against 32-bit limits), ``sizing``
        (:func:`tcpmodels.models.bdp.sizing_table` over the grid) and
        ``ratio_97_7`` (:func:`ratio_candidates`).
    """
    return {
        "paper_vs_ours": _comparisons(link_rate_bps, rtt_s),
        "path": path_table(link_rate_bps, rtt_s),
        "in_flight": in_flight_table(rtt_s),
        "sizing": sizing_table(rates_bps, rtts_s),
        "ratio_97_7": ratio_candidates(rtt_s),
    }


def _gbps(x: float) -> str:
    return f"{x / 1e9:.2f} Gbit/s"


def claims(link_rate_bps: float = LINK_RATE_BPS, rtt_s: float = RTT_S) -> pd.DataFrame:
    """Verdict on each claim of the press release.

    Parameters
    ----------
    link_rate_bps : float, default 100e9
        Path rate. [bit/s]
    rtt_s : float, default 0.296
        Path RTT. [s]

    Returns
    -------
    pandas.DataFrame
        Columns ``claim, paper_says, we_measured, holds, why`` (see
        :func:`tcpmodels.papers.common.claims_frame`).
    """
    window14 = max_window_bytes(WSCALE_SHIFT_MAX)
    ceiling = max_window_ceiling_bps(WSCALE_SHIFT_MAX, rtt_s)
    need29 = window_needed_bytes(STANDARD_TCP_RATE_BPS, rtt_s)
    need73 = window_needed_bytes(LFTCP_RATE_BPS, rtt_s)
    need_lo = window_needed_bytes(STANDARD_TCP_RATE_BPS - _RATE_HALF_UNIT_BPS, rtt_s)
    need_hi = window_needed_bytes(STANDARD_TCP_RATE_BPS + _RATE_HALF_UNIT_BPS, rtt_s)
    bdp = bdp_bytes(link_rate_bps, rtt_s)
    cand = ratio_candidates(rtt_s)
    consistent = cand[cand.consistent_with_97_7]
    primary = cand.iloc[0]
    int32_max = 2.0**31 - 1
    implied_bps = STANDARD_TCP_RATE_BPS / STANDARD_TCP_FRACTION_OF_THEORY

    ratio_measured = (
        f"29 Gbit/s / {_gbps(primary.theoretical_bps)} (window / RTT) = {primary.fraction:.1%} "
        f"({primary.fraction_low:.1%}-{primary.fraction_high:.1%} for 28.5-29.5 Gbit/s); "
        f"{len(consistent)} of {len(cand)} candidate readings are consistent with 97.7 % within rounding"
    )
    implied = (
        f"97.7 % implies a theoretical value of {_gbps(implied_bps)}: with the largest window an RTT of "
        f"{window14 * 8 / implied_bps * 1e3:.1f} ms, or at {rtt_s * 1e3:g} ms a window of "
        f"{window_needed_bytes(implied_bps, rtt_s) / 1e9:.3f} GB; the release states neither, nor the MTU, "
        "nor how 'theoretical' was computed. "
    )
    if consistent.empty:
        ratio_why = implied + "No candidate reading gives 97.7 %: the figure cannot be derived from the text."
    else:
        options = "; ".join(
            f"'{r.candidate}' if the unrounded rate was {_gbps(r.rate_for_97_7_bps)}"
            if np.isfinite(r.rate_for_97_7_bps) else f"'{r.candidate}'"
            for r in consistent.itertuples()
        )
        ratio_why = (
            implied + f"Possible, not derivable: {options}. Each needs an assumption the text does not make, "
            "so the figure cannot be derived from the text."
        )

    verdicts = [
        Claim(
            claim="C4.1 standard TCP is limited to 29 Gbit/s on this network",
            paper_says="現在広く用いられているTCP通信の限界(本実験ネットワークにおいては29ギガビット/秒); measured 29 Gbit/s",
            we_measured=f"largest window {window14:,.0f} B / {rtt_s * 1e3:g} ms = {_gbps(ceiling)}",
            holds=bool(abs(ceiling - STANDARD_TCP_RATE_BPS) <= _RATE_HALF_UNIT_BPS),
            why="the window ceiling rounds to the printed 29 Gbit/s; the limit is one window per RTT",
        ),
        Claim(
            claim="C4.2 the limit is about 1 GB of data in flight",
            paper_says="一度に送ることのできるデータ量が1ギガバイトに制限される (note 2, Fig. 6)",
            we_measured=(
                f"29 Gbit/s x {rtt_s * 1e3:g} ms = {need29 / 1e9:.3f} GB in flight "
                f"({need_lo / 1e9:.3f}-{need_hi / 1e9:.3f} GB for 28.5-29.5 Gbit/s); "
                f"largest TCP window 65535*2^14 = {window14 / 1e9:.4f} GB = 2^30 - 2^14 B"
            ),
            holds=bool(need_lo <= window14 <= need_hi),
            why=(
                "the in-flight bytes of the measured rate match the largest window TCP can advertise "
                "(16-bit field, window-scale shift at most 14, RFC 7323 Sec. 2.3); '1 GB' is that 1 GiB"
            ),
        ),
        Claim(
            claim="C4.3 29 Gbit/s is 97.7 % of the theoretical value",
            paper_says="29ギガビット/秒のデータ通信速度(理論値の97.7%)",
            we_measured=ratio_measured,
            holds=None,
            why=ratio_why,
        ),
        Claim(
            claim="C4.4 73 Gbit/s is beyond what standard TCP's window allows on this path",
            paper_says="LFTCP reached 73 Gbit/s, over twice the 29 Gbit/s limit (2倍を超える)",
            we_measured=(
                f"73 Gbit/s needs {need73 / 1e9:.3f} GB in flight = {need73 / window14:.2f} x the largest window; "
                f"73 / {ceiling / 1e9:.2f} = {LFTCP_RATE_BPS / ceiling:.2f}"
            ),
            holds=bool(need73 > window14 and LFTCP_RATE_BPS / ceiling > 2),
            why=f"needs window-scale shift {min_wscale_shift(LFTCP_RATE_BPS, rtt_s):.0f} > 14, so not standard TCP",
        ),
        Claim(
            claim="C4.5 73 Gbit/s needs buffer variables wider than 32 bits (LFTCP uses 64-bit)",
            paper_says="32ビット値を用いる...制限; 送信側バッファに関連する変数を64ビット値に拡張",
            we_measured=(
                f"{need73 / 1e9:.3f} GB in flight = {need73 / int32_max:.2f} x (2^31 - 1) and "
                f"{need73 / 2.0**32:.2f} x 2^32"
            ),
            holds=bool(need73 > int32_max),
            why=(
                "the bytes in flight alone exceed the largest signed 32-bit integer, the type Linux uses for "
                "socket buffer sizes, and the send buffer must hold at least those bytes; an unsigned 32-bit "
                "count (4.29 GB) would still hold them, so the claim holds for signed 32-bit variables"
            ),
        ),
        Claim(
            claim="C4.6 standard single-stream TCP cannot fill 100 Gbit/s at this distance",
            paper_says="現在使われているTCP通信技術を用いては性能をフルに活用できず (UDP or parallel streams needed)",
            we_measured=(
                f"BDP {bdp / 1e9:.2f} GB needs shift {min_wscale_shift(link_rate_bps, rtt_s):.0f}; "
                f"one stream reaches at most {min(1.0, ceiling / link_rate_bps):.1%} of {link_rate_bps / 1e9:g} Gbit/s"
            ),
            holds=bool(ceiling < link_rate_bps),
            why="the window ceiling is below the link rate whatever the congestion control does",
        ),
    ]
    return claims_frame(verdicts)


def plot_ceiling_vs_rtt(
    ax=None,
    *,
    shifts: Sequence[int] = tuple(range(WSCALE_SHIFT_MAX + 1)),
    rtt_range_s: tuple[float, float] = (1e-3, 1.0),
    n_rtts: int = 200,
    link_rate_bps: float = LINK_RATE_BPS,
    rtt_mark_s: float = RTT_S,
):
    """Window-limited ceiling against RTT, one line per window-scale shift (log-log).

    Marks the link rate, the press release's RTT, the ceiling of the largest
    window there, and the two reported rates (29 and 73 Gbit/s).

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if omitted.
    shifts : sequence of int
        Window-scale shifts to draw (0-14).
    rtt_range_s : (float, float)
        RTT axis range. [s]
    n_rtts : int
        Points per line.
    link_rate_bps : float
        Horizontal reference line. [bit/s]
    rtt_mark_s : float
        RTT to mark. [s]

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from matplotlib import cm, colors

    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 5.0))
    else:
        fig = ax.figure
    rtts = np.geomspace(rtt_range_s[0], rtt_range_s[1], int(n_rtts))
    norm = colors.Normalize(vmin=0, vmax=WSCALE_SHIFT_MAX)
    cmap = plt.get_cmap("viridis")
    for shift in shifts:
        ax.plot(rtts * 1e3, max_window_ceiling_bps(float(shift), rtts) / 1e9, color=cmap(norm(shift)), lw=1.2)
    ax.axhline(link_rate_bps / 1e9, color="black", ls="--", lw=1, label=f"link {link_rate_bps / 1e9:g} Gbit/s")
    ax.axvline(rtt_mark_s * 1e3, color="grey", ls=":", lw=1)
    ceiling = max_window_ceiling_bps(WSCALE_SHIFT_MAX, rtt_mark_s)
    ax.plot([rtt_mark_s * 1e3], [ceiling / 1e9], "o", color="tab:red", ms=7,
            label=f"shift 14 at {rtt_mark_s * 1e3:g} ms: {ceiling / 1e9:.1f} Gbit/s")
    ax.annotate(f"{ceiling / 1e9:.1f} Gbit/s", (rtt_mark_s * 1e3, ceiling / 1e9), xytext=(-70, -22),
                textcoords="offset points", color="tab:red", arrowprops={"arrowstyle": "->", "color": "tab:red"})
    ax.plot([rtt_mark_s * 1e3], [STANDARD_TCP_RATE_BPS / 1e9], "x", color="tab:orange", ms=9, mew=2,
            label="standard TCP, reported 29 Gbit/s")
    ax.plot([rtt_mark_s * 1e3], [LFTCP_RATE_BPS / 1e9], "*", color="tab:purple", ms=11,
            label="LFTCP, reported 73 Gbit/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("RTT [ms]")
    ax.set_ylabel("window-limited ceiling [Gbit/s]")
    ax.set_title("Largest-window ceiling 65535·2^shift B / RTT")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="window-scale shift")
    return fig

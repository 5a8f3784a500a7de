"""P4's claims, each part an exact computation judged against the printing precision of the release."""

from __future__ import annotations

import pandas as pd

from tcpmodels.models.bdp import (
    WSCALE_SHIFT_MAX,
    bdp_bytes,
    max_window_bytes,
    max_window_ceiling_bps,
    min_wscale_shift,
    window_needed_bytes,
)
from tcpmodels.papers.common import claim_spec as _spec
from tcpmodels.papers.p4_lftcp.constants import (
    LFTCP_RATE_BPS,
    RATE_HALF_UNIT_BPS,
    STANDARD_TCP_FRACTION_OF_THEORY,
    STANDARD_TCP_RATE_BPS,
)
from tcpmodels.papers.p4_lftcp.tables import P4Dataset
from tcpmodels.papers.phrases import verdict_counts
from tcpmodels.stats import NOT_TESTABLE_HERE, SUPPORTED, Headline, arithmetic, claims_table, inequality, not_testable


def _gbps(x: float) -> str:
    return f"{x / 1e9:.2f} Gbit/s"


def claims(dataset: P4Dataset, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Verdict on each claim of the press release, composite claims split into parts.

    Every part is an exact computation from the release's numbers (``n_runs`` 0):
    equalities are judged with the printing precision of the release's numbers
    (29 and 73 Gbit/s are integers: +-0.5 Gbit/s; 97.7 % has one decimal:
    +-0.05 %), inequalities exactly.

    Parameters
    ----------
    dataset : P4Dataset
    tables : dict
        :func:`tables` of the same dataset (``ratio_97_7`` is read from it).

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`tcpmodels.stats.VERDICT_COLUMNS`.
    """
    link_rate_bps, rtt_s = dataset.link_rate_bps, dataset.rtt_s
    window14 = max_window_bytes(WSCALE_SHIFT_MAX)
    ceiling = max_window_ceiling_bps(WSCALE_SHIFT_MAX, rtt_s)
    need29 = window_needed_bytes(STANDARD_TCP_RATE_BPS, rtt_s)
    need73 = window_needed_bytes(LFTCP_RATE_BPS, rtt_s)
    need_lo = window_needed_bytes(STANDARD_TCP_RATE_BPS - RATE_HALF_UNIT_BPS, rtt_s)
    need_hi = window_needed_bytes(STANDARD_TCP_RATE_BPS + RATE_HALF_UNIT_BPS, rtt_s)
    bdp = bdp_bytes(link_rate_bps, rtt_s)
    cand = tables["ratio_97_7"]
    consistent = cand[cand.consistent_with_97_7]
    primary = cand.iloc[0]
    int32_max = 2.0**31 - 1
    implied_bps = STANDARD_TCP_RATE_BPS / STANDARD_TCP_FRACTION_OF_THEORY
    c41 = "C4.1 standard TCP is limited to 29 Gbit/s on this network"
    c42 = "C4.2 the limit is about 1 GB of data in flight"
    c43 = "C4.3 29 Gbit/s is 97.7 % of the theoretical value"
    c44 = "C4.4 73 Gbit/s is beyond what standard TCP's window allows on this path"
    c45 = "C4.5 73 Gbit/s needs buffer variables wider than 32 bits (LFTCP uses 64-bit)"
    c46 = "C4.6 standard single-stream TCP cannot fill 100 Gbit/s at this distance"
    half_rate = "29 is printed as an integer: +-0.5 Gbit/s"
    rows = [
        arithmetic(
            _spec(c41, "29 Gbit/s = largest window / RTT",
                  "現在広く用いられているTCP通信の限界(本実験ネットワークにおいては29ギガビット/秒); measured 29 Gbit/s",
                  "window ceiling [Gbit/s]", 0.5, half_rate),
            ceiling / 1e9, STANDARD_TCP_RATE_BPS / 1e9,
            we_measured=f"largest window {window14:,.0f} B / {rtt_s * 1e3:g} ms = {_gbps(ceiling)}",
            why="the limit is one largest window per RTT"),
        arithmetic(
            _spec(c42, "in flight at 29 Gbit/s = largest TCP window",
                  "一度に送ることのできるデータ量が1ギガバイトに制限される (note 2, Fig. 6)",
                  "in flight at the printed rate minus the largest window [GB]", (need_hi - need29) / 1e9,
                  "in-flight bytes of 28.5-29.5 Gbit/s, the range the printed 29 stands for"),
            need29 / 1e9, window14 / 1e9,
            we_measured=(f"29 Gbit/s x {rtt_s * 1e3:g} ms = {need29 / 1e9:.3f} GB in flight "
                         f"({need_lo / 1e9:.3f}-{need_hi / 1e9:.3f} GB for 28.5-29.5 Gbit/s); largest window "
                         f"65535*2^14 = {window14 / 1e9:.4f} GB = 2^30 - 2^14 B"),
            why="16-bit window field, shift at most 14 (RFC 7323 Sec. 2.3); '1 GB' is that 1 GiB"),
    ]
    rows += [
        arithmetic(
            _spec(c43, "window / RTT reading", "29ギガビット/秒のデータ通信速度(理論値の97.7%)",
                  "29 Gbit/s / (largest window / RTT) [%]", 0.05, "97.7 % has one decimal: +-0.05 %"),
            primary.fraction * 100, STANDARD_TCP_FRACTION_OF_THEORY * 100,
            ours_range=(primary.fraction_low * 100, primary.fraction_high * 100),
            we_measured=(f"29 Gbit/s / {_gbps(primary.theoretical_bps)} = {primary.fraction:.1%} "
                         f"({primary.fraction_low:.1%}-{primary.fraction_high:.1%} for 28.5-29.5 Gbit/s)"),
            why=f"97.7 % would need a theoretical value of {_gbps(implied_bps)}, i.e. an RTT of "
                f"{window14 * 8 / implied_bps * 1e3:.1f} ms with the largest window"),
        not_testable(
            _spec(c43, "some reading the text allows", "29ギガビット/秒のデータ通信速度(理論値の97.7%)",
                  "29 Gbit/s / theoretical value [%]", 0.05, "97.7 % has one decimal"),
            we_measured=f"{len(consistent)} of {len(cand)} candidate readings reach 97.7 % within rounding"
                        + (": " + "; ".join(consistent.candidate) if len(consistent) else ""),
            why=("the release states neither the MTU nor how 'theoretical' was computed; a consistent candidate "
                 "needs an assumption the text does not make, so no run or computation can decide it")),
        inequality(
            _spec(c44, "73 Gbit/s needs more than the largest window",
                  "LFTCP reached 73 Gbit/s, over twice the 29 Gbit/s limit (2倍を超える)",
                  "in flight at 73 Gbit/s / largest window", 1.0, "exact: any excess needs shift > 14"),
            need73 / window14, 1.0,
            we_measured=f"73 Gbit/s needs {need73 / 1e9:.3f} GB = {need73 / window14:.2f} x the largest window",
            why=f"needs window-scale shift {min_wscale_shift(LFTCP_RATE_BPS, rtt_s):.0f} > 14"),
        inequality(
            _spec(c44, "73 Gbit/s is more than twice the limit", "2倍を超える",
                  "73 Gbit/s / window ceiling", 2.0, "the release's 'more than twice'"),
            LFTCP_RATE_BPS / ceiling, 2.0, we_measured=f"73 / {ceiling / 1e9:.2f} = {LFTCP_RATE_BPS / ceiling:.2f}"),
        inequality(
            _spec(c45, "exceeds a signed 32-bit byte count",
                  "32ビット値を用いる...制限; 送信側バッファに関連する変数を64ビット値に拡張",
                  "in flight at 73 Gbit/s / (2^31 - 1)", 1.0, "exact"),
            need73 / int32_max, 1.0,
            we_measured=f"{need73 / 1e9:.3f} GB = {need73 / int32_max:.2f} x (2^31 - 1)",
            why="Linux keeps socket buffer sizes in int; the send buffer must hold the bytes in flight"),
        inequality(
            _spec(c45, "exceeds an unsigned 32-bit byte count",
                  "32ビット値を用いる...制限; 送信側バッファに関連する変数を64ビット値に拡張",
                  "in flight at 73 Gbit/s / 2^32", 1.0, "exact"),
            need73 / 2.0**32, 1.0, we_measured=f"{need73 / 1e9:.3f} GB = {need73 / 2.0**32:.2f} x 2^32",
            why="an unsigned 32-bit count (4.29 GB) would still hold 73 Gbit/s x 296 ms: the claim needs the "
                "signed reading"),
        inequality(
            _spec(c46, "window ceiling below the link rate",
                  "現在使われているTCP通信技術を用いては性能をフルに活用できず (UDP or parallel streams needed)",
                  "window ceiling [Gbit/s]", 1.0, "exact", direction=-1),
            ceiling / 1e9, link_rate_bps / 1e9,
            we_measured=(f"BDP {bdp / 1e9:.2f} GB needs shift {min_wscale_shift(link_rate_bps, rtt_s):.0f}; one "
                         f"stream reaches at most {min(1.0, ceiling / link_rate_bps):.1%} of "
                         f"{link_rate_bps / 1e9:g} Gbit/s"),
            why="the window ceiling is below the link rate whatever the congestion control does"),
    ]
    return claims_table(rows, family="P4 arithmetic")


#: Mask of the headline rows: C4.1 (the 29 Gbit/s limit), C4.4 and C4.7's measured window-limited rate (when measured).
headline = Headline(claims=("C4.1", "C4.4", "C4.7"), exclude_parts=("contrast",))


def answer(verdicts: pd.DataFrame) -> list[str]:
    """The answer box of the P4 notebook: at most three sentences computed from the verdicts.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        :func:`claims`, with the measured C4.7 rows appended when there are any.

    Returns
    -------
    list of str
        (1) the release's arithmetic (C4.1-C4.6) by outcome; (2) the parts no computation can decide;
        (3) C4.7 on the kernel.
    """
    arith = verdicts[~verdicts["claim"].str.startswith("C4.7")]
    decided = arith[arith["verdict"] != NOT_TESTABLE_HERE]
    first = (f"The release's arithmetic (C4.1-C4.6): {verdict_counts(decided['verdict'])} of {len(decided)} parts; "
             + "; ".join(f"{c[:4]} {p}: {v}" for c, p, v in zip(decided["claim"], decided["part"], decided["verdict"])
                         if v != SUPPORTED) + ".")
    nt = arith[arith["verdict"] == NOT_TESTABLE_HERE]
    second = ("Not testable here: " + "; ".join(f"{c[:4]} {p}" for c, p in zip(nt["claim"], nt["part"]))
              + " (the release leaves the reading open).") if len(nt) else ""
    c47 = verdicts[verdicts["claim"].str.startswith("C4.7") & verdicts["part"].str.contains("all cells")]
    third = (f"Measured on the kernel (C4.7), a window-limited connection carries one advertised window per RTT: "
             f"{c47['verdict'].iloc[0]} (ratio - 1 = {c47['effect'].iloc[0]:+.3f}, {c47['n_runs'].iloc[0]} runs).") \
        if len(c47) else ""
    return [x for x in (first, second, third) if x]

"""P4 measured: the window-limited rate on the real kernel against ``window / RTT``.

Reads the dataset of :mod:`tcpmodels.experiments.p4` (``p4_kernel.parquet``,
one row per transfer) and judges the relation the press release's 29 Gbit/s
rests on: a connection limited by the receiver's window carries one window
per round trip.

The test and its tolerance were fixed before the campaign ran (three pilot
transfers had been seen; see the notebook): the measured/model ratio,
one value per independent transfer, is equivalent to 1 within ±5 % (TOST).
Why 5 %: the model's inputs are measured (advertised window from
``tcpi_snd_wnd``, RTT from ``tcpi_min_rtt``), so what it leaves out is small
and one-sided: delayed ACKs leave up to two segments of the window unsent
per round trip (2 x 1448 B is 7 % of the smallest advertised window, about
40 kB, and under 1 % above 300 kB), and queueing in the rate limiter and the
user-space delay element lengthens the round trip beyond ``min_rtt`` by
about 1-2 %. A grid average beyond 5 % would mean the relation itself
fails, not these details.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p4 import SCHEMA
from tcpmodels.papers.common import rerun_once_caught_up
from tcpmodels.stats import ClaimSpec, claims_table, equivalence, inequality

__all__ = ["RATIO_MARGIN", "measured_testbed", "testbed_comparison", "load_measured", "measured_table", "measured_claims", "measured_findings", "plot_measured"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    df : pandas.DataFrame
        :func:`load_measured`.
""")

#: Tolerance of the measured/model ratio around 1, fixed before the campaign (see the module docstring). [-]
RATIO_MARGIN = 0.05
#: The press release's RTT. [ms]
PAPER_RTT_MS = 296.0
#: TCP's largest window, 65,535 x 2^14 (RFC 7323), the release's ~1 GB. [bytes]
PAPER_WINDOW_BYTES = 65_535 * 2**14


def measured_testbed(df: pd.DataFrame) -> str:
    """The kernel testbed whose transfers the verdicts use: ``steered`` once it has caught up, else ``reordering``.

    The transfers ran on two testbeds: ``reordering`` (no RPS steering, every transfer before 2026-11-28) and
    ``steered`` (the rerun with ``p4 kernel --keep-flow-order``). The steered one is used once it has at
    least as many transfers as the other in every (cap, RTT) cell that has any, so the verdicts never rest
    on fewer runs than those they replace.

    Parameters
    ----------
    df : pandas.DataFrame
        Transfers of both testbeds (:func:`load_measured` with ``testbed="all"``); a table without a
        ``testbed`` column is all ``reordering``.

    Returns
    -------
    str
        ``"steered"`` or ``"reordering"``.
    """
    if "testbed" not in df:
        return "reordering"
    return rerun_once_caught_up(df, ["rcvbuf_cap_bytes", "rtt_ms"], "steered")


def load_measured(data_dir: str | Path = "data", testbed: str = "auto") -> pd.DataFrame:
    """The measured transfers (``p4_kernel.parquet``), rows with an error left out; provenance in ``attrs``.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory, or its ``datasets`` folder.
    testbed : {"auto", "all", "reordering", "steered"}
        Which kernel testbed's transfers: ``auto`` (default) the one :func:`measured_testbed` picks, ``all``
        both (with the ``testbed`` column, for :func:`testbed_comparison`).

    Returns
    -------
    pandas.DataFrame
        One row per transfer (columns of :func:`tcpmodels.experiments.p4.kernel_frame`, ``testbed`` filled
        with ``reordering`` in a table older than the column); the provenance dict in
        ``.attrs["provenance"]``, the number of rows dropped for an error in ``.attrs["n_errors"]``, the
        testbed in ``.attrs["testbed"]`` (``all`` for both) and the transfers of the other testbed in
        ``.attrs["n_other_testbed"]``.

    Raises
    ------
    FileNotFoundError
        When the dataset is missing (it names the command that writes it).
    ValueError
        For another ``testbed``.
    """
    if testbed not in ("auto", "all", "reordering", "steered"):
        raise ValueError(f"testbed must be 'auto', 'all', 'reordering' or 'steered'; got {testbed!r}")
    frames = SCHEMA.read(data_dir, ["kernel"])
    df = frames["kernel"]
    df = df.assign(testbed=df["testbed"].fillna("reordering")) if "testbed" in df else df.assign(testbed="reordering")
    ok = df[df["error"].isna()].reset_index(drop=True) if "error" in df else df
    n_errors = len(df) - len(ok)
    chosen = measured_testbed(ok) if testbed == "auto" else testbed
    if chosen != "all":
        n_errors = int((df["testbed"] == chosen).sum()) - int((ok["testbed"] == chosen).sum())
        ok = ok[ok["testbed"] == chosen].reset_index(drop=True)
    ok.attrs["provenance"] = frames["provenance"]
    ok.attrs["n_errors"] = n_errors
    ok.attrs["testbed"] = chosen
    ok.attrs["n_other_testbed"] = int((df["testbed"] != chosen).sum()) if chosen != "all" else 0
    return ok


def testbed_comparison(df: pd.DataFrame) -> pd.DataFrame:
    """The (cap, RTT) cells measured on both testbeds: the mean ratio on each and their difference.

    Parameters
    ----------
    df : pandas.DataFrame
        Transfers of both testbeds (:func:`load_measured` with ``testbed="all"``).

    Returns
    -------
    pandas.DataFrame
        ``cap [KiB], RTT [ms]``, per testbed the mean ratio measured / (window / min RTT), the transfers and
        the retransmissions in the measured spans (suffixes `` reordering`` / `` steered``), and
        ``steered - reordering`` (of the mean ratios); empty without a cell measured on both.
    """
    cols = ["cap [KiB]", "RTT [ms]", "ratio reordering", "ratio steered", "steered - reordering",
            "runs reordering", "runs steered", "retrans reordering", "retrans steered"]
    if "testbed" not in df or df["testbed"].nunique() < 2:
        return pd.DataFrame(columns=cols)
    g = df.groupby(["rcvbuf_cap_bytes", "rtt_ms", "testbed"])
    t = pd.DataFrame({"ratio": g["ratio"].mean(), "runs": g.size(), "retrans": g["retrans_in_span"].sum()}).unstack()
    t.columns = [f"{a} {b}" for a, b in t.columns]
    t = t.dropna(subset=["ratio reordering", "ratio steered"]).reset_index()
    t["cap [KiB]"] = t["rcvbuf_cap_bytes"] / 1024
    t["RTT [ms]"] = t["rtt_ms"]
    t["steered - reordering"] = t["ratio steered"] - t["ratio reordering"]
    return t[cols].sort_values(["RTT [ms]", "cap [KiB]"]).reset_index(drop=True)


@_PARAMETERS.fill
def measured_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (receive-buffer cap, RTT) cell: advertised window, measured and model rates, their ratio.

    Parameters
    ----------
    {df}

    Returns
    -------
    pandas.DataFrame
        ``cap [KiB], RTT [ms], advertised [kB], advertised / cap, measured [Mbit/s]`` (mean over
        runs), ``window/RTT [Mbit/s]`` (mean model), ``ratio`` (mean measured/model), ``ratio sd``,
        ``ratio (srtt)``, ``cap/RTT [Mbit/s]``, ``rate / link``, ``retrans``, ``runs``.
    """
    g = df.groupby(["rcvbuf_cap_bytes", "rtt_ms"])
    out = pd.DataFrame({
        "cap [KiB]": [c / 1024 for c, _ in g.groups],
        "RTT [ms]": [r for _, r in g.groups],
        "advertised [kB]": g["snd_wnd_bytes"].mean().to_numpy() / 1e3,
        "advertised / cap": g["adv_fraction_of_cap"].mean().to_numpy(),
        "measured [Mbit/s]": g["rate_bps"].mean().to_numpy() / 1e6,
        "window/RTT [Mbit/s]": g["model_bps"].mean().to_numpy() / 1e6,
        "ratio": g["ratio"].mean().to_numpy(),
        "ratio sd": g["ratio"].std(ddof=1).to_numpy(),
        "ratio (srtt)": g["ratio_srtt"].mean().to_numpy(),
        "cap/RTT [Mbit/s]": g["cap_model_bps"].mean().to_numpy() / 1e6,
        "rate / link": g["rate_fraction_of_link"].mean().to_numpy(),
        "retrans": g["retrans_in_span"].sum().to_numpy(),
        "runs": g.size().to_numpy(),
    })
    return out.sort_values(["RTT [ms]", "cap [KiB]"]).reset_index(drop=True)


@_PARAMETERS.fill
def measured_claims(df: pd.DataFrame) -> pd.DataFrame:
    """Verdicts on C4.7 "a window-limited connection carries one advertised window per RTT" from the runs.

    Parameters
    ----------
    {df}

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`tcpmodels.stats.VERDICT_COLUMNS`: all runs and the 296 ms runs against
        ``window / RTT`` (TOST on measured/model - 1, margin :data:`RATIO_MARGIN`), the window
        (not the link) limits (largest rate / link rate < 1), and the contrast with the receive-buffer
        cap taken as the window (same TOST on measured / (cap / RTT) - 1).
    """
    claim = "C4.7 a window-limited TCP connection carries one advertised window per round trip (rate = window / RTT)"
    says = ("標準TCPの限界29ギガビット/秒 = the largest window / RTT (the release's premise; measured here on the "
            "Linux kernel at scaled windows, RTTs up to 296 ms)")
    why_margin = ("fixed before the campaign: delayed ACKs (<= 2 segments of the window) and queueing beyond "
                  "min_rtt (1-2 %)")
    n = len(df)
    rows = []
    for part, sub in (("all cells", df), (f"at {PAPER_RTT_MS:g} ms", df[df["rtt_ms"] == PAPER_RTT_MS])):
        r = sub["ratio"].to_numpy(float) - 1.0
        rows.append(equivalence(
            ClaimSpec(claim=claim, part=f"measured / (advertised window / min RTT), {part}", paper_says=says,
                      quantity="measured rate / model - 1 per run [-]", smallest_effect=RATIO_MARGIN,
                      effect_source=why_margin),
            r, we_measured=(f"{len(r)} transfers, {sub.groupby(['rcvbuf_cap_bytes', 'rtt_ms']).ngroups} cells: ratio "
                            f"mean {np.mean(r) + 1:.4f}, min {np.min(r) + 1:.4f}, max {np.max(r) + 1:.4f}"
                            if len(r) else "no transfers"),
            why="one value per transfer (a fresh connection each); model window = tcpi_snd_wnd median, RTT = tcpi_min_rtt"))
    top = float(df["rate_fraction_of_link"].max()) if n else float("nan")
    rows.append(inequality(
        ClaimSpec(claim=claim, part="the window, not the link, limits", paper_says=says,
                  quantity="largest measured rate / link rate [-]", direction=-1, smallest_effect=1.0,
                  effect_source="exact"),
        top, 1.0, we_measured=(f"largest rate {df['rate_bps'].max() / 1e6:.1f} Mbit/s = {top:.1%} of the "
                               f"{df['link_rate_bps'].iloc[0] / 1e6:g} Mbit/s link; median rwnd-limited time "
                               f"{df['rwnd_limited_fraction'].median():.1%} of the span" if n else "no transfers"),
        why="the tbf rate limiter sits far above every cell's window-limited rate"))
    c = df["rate_bps"].to_numpy(float) / df["cap_model_bps"].to_numpy(float) - 1.0
    rows.append(equivalence(
        ClaimSpec(claim=claim, part="contrast: the receive-buffer cap taken as the window (cap / RTT)", paper_says=says,
                  quantity="measured rate / (cap / RTT) - 1 per run [-]", smallest_effect=RATIO_MARGIN,
                  effect_source="the same margin"),
        c, we_measured=(f"advertised window is {df['adv_fraction_of_cap'].mean():.1%} of the cap on average "
                        f"({df['adv_fraction_of_cap'].min():.1%}-{df['adv_fraction_of_cap'].max():.1%})"
                        if n else "no transfers"),
        why="Linux advertises only part of the receive buffer (tcp_win_from_space: scaling_ratio), so the model "
            "needs the advertised window, not the buffer size"))
    return claims_table(rows, family="P4 kernel")


def _kib(x: float) -> str:
    return f"{x / 1024:g} KiB" if x < 1024**2 else f"{x / 1024**2:g} MiB"


def measured_findings(df: pd.DataFrame) -> str:
    """What the kernel campaign measured, in Markdown, every number from the rows and their provenance.

    The grid run (against the plan in the provenance), the verdicts of C4.7 with their
    intervals, the worst cell, how much of the buffer cap Linux advertises, and how far the
    scaled windows are from the release's.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`load_measured` (its ``attrs["provenance"]`` gives the plan; optional).

    Returns
    -------
    str
        Markdown paragraphs separated by blank lines; rates in [Mbit/s], windows in [kB] or KiB.
    """
    if df.empty:
        return "No measured transfers in the dataset: C4.7 cannot be judged."
    prov = df.attrs.get("provenance", {}) or {}
    kern = prov.get("kernel", {})
    cells = df.groupby(["rcvbuf_cap_bytes", "rtt_ms"])
    per_cell = cells.size()
    planned = kern.get("n_planned")
    n_err = df.attrs.get("n_errors", 0)
    rtts = ", ".join(f"{r:g}" for r in sorted(df["rtt_ms"].unique()))
    caps = sorted(df["rcvbuf_cap_bytes"].unique())
    reps = sorted(df["rep"].unique())
    text = [f"**Runs.** {len(df)} transfers" + (f" of the {planned} planned" if planned else "")
            + (f" ({n_err} left out for an error)" if n_err else "")
            + f", {len(per_cell)} (cap, RTT) cells with {per_cell.min()}-{per_cell.max()} transfers each "
            f"(repetitions {', '.join(str(int(r)) for r in reps)}); RTTs {rtts} ms, buffer caps "
            f"{_kib(caps[0])}-{_kib(caps[-1])}; measured spans {df['span_s'].min():.1f}-{df['span_s'].max():.1f} s "
            f"after a warm-up of {df['t_from_s'].min():.1f}-{df['t_from_s'].max():.1f} s; "
            f"{int(df['retrans_in_span'].sum())} retransmissions in the measured spans."
            + (f" Kernel testbed: {df.attrs['testbed']}"
               + (f" ({df.attrs['n_other_testbed']} transfers of the other testbed not used here)"
                  if df.attrs.get("n_other_testbed") else "") + "." if df.attrs.get("testbed") else "")]
    v = measured_claims(df)
    lines = []
    for _, row in v.iterrows():
        if row["n_runs"] > 0:  # a TOST over transfers: the mean and its 90 % interval
            what = (f"ratio - 1 = {row['effect']:+.4f}, 90 % interval [{row['ci_low']:+.4f}, {row['ci_high']:+.4f}], "
                    f"{int(row['n_runs'])} transfers")
        else:  # an exact inequality
            what = row["we_measured"]
        lines.append(f"- {row['part']}: {what}: **{row['verdict']}**")
    text.append(f"**C4.7, the verdicts** (margin ±{RATIO_MARGIN:.0%} on the ratio):\n\n" + "\n".join(lines))
    ratio = cells["ratio"].mean()
    (wc, wr), worst = (ratio - 1).abs().idxmax(), ratio[(ratio - 1).abs().idxmax()]
    by_rtt = df.groupby("rtt_ms")["ratio"].mean()
    text.append("**Per cell.** Mean ratio measured / (window / min RTT) per cell "
                f"{ratio.min():.4f}-{ratio.max():.4f}; farthest from 1: {_kib(wc)} at {wr:g} ms ({worst:.4f}). "
                "Per RTT: " + ", ".join(f"{r:g} ms {x:.4f}" for r, x in by_rtt.items()) + ". "
                f"Linux advertises {df['adv_fraction_of_cap'].mean():.1%} of the buffer cap on average "
                f"({df['adv_fraction_of_cap'].min():.1%}-{df['adv_fraction_of_cap'].max():.1%}), so cap / RTT "
                f"overstates the rate by a factor {(df['cap_model_bps'] / df['rate_bps']).median():.2f} (median).")
    adv = df["snd_wnd_bytes"]
    link = df["link_rate_bps"].iloc[0]
    text.append(f"**Scale.** Advertised windows {adv.min() / 1e3:.1f}-{adv.max() / 1e3:.0f} kB, "
                f"{PAPER_WINDOW_BYTES / adv.max():.0f} to {PAPER_WINDOW_BYTES / adv.min():.0f} times smaller than "
                f"the release's largest window ({PAPER_WINDOW_BYTES / 1e9:.2f} GB); rates "
                f"{df['rate_bps'].min() / 1e6:.2f}-{df['rate_bps'].max() / 1e6:.1f} Mbit/s on a {link / 1e6:g} Mbit/s "
                f"link (at most {df['rate_fraction_of_link'].max():.1%} of it), instead of 29 Gbit/s on 100 Gbit/s.")
    return "\n\n".join(text)


@_PARAMETERS.fill
def plot_measured(df: pd.DataFrame, ax: Sequence[Axes] | None = None) -> Figure:
    """Measured rate against ``window / RTT`` (log-log, one colour per RTT) and the ratio against the window.

    Parameters
    ----------
    {df}
    ax : sequence of two matplotlib.axes.Axes, optional
        Axes to draw on; a new figure with two panels is made if omitted.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(1, 2, figsize=(12, 4.8))
    else:
        fig = ax[0].figure
    rtts = sorted(df["rtt_ms"].unique())
    cmap = plt.get_cmap("viridis")
    for i, rtt in enumerate(rtts):
        sub = df[df["rtt_ms"] == rtt]
        color = cmap(i / max(1, len(rtts) - 1))
        ax[0].loglog(sub["model_bps"] / 1e6, sub["rate_bps"] / 1e6, "o", color=color, ms=5, label=f"{rtt:g} ms")
        ax[0].loglog(sub["cap_model_bps"] / 1e6, sub["rate_bps"] / 1e6, "x", color=color, ms=5, alpha=0.5)
        ax[1].semilogx(sub["snd_wnd_bytes"] / 1e3, sub["ratio"], "o", color=color, ms=5, label=f"{rtt:g} ms")
    lo = 0.7 * min(df["rate_bps"].min(), df["model_bps"].min()) / 1e6
    hi = 1.4 * max(df["cap_model_bps"].max(), df["model_bps"].max()) / 1e6
    ax[0].plot([lo, hi], [lo, hi], color="black", lw=1, label="measured = model")
    ax[0].set_xlabel("model [Mbit/s]: advertised window / min RTT (o), buffer cap / RTT (x)")
    ax[0].set_ylabel("measured rate [Mbit/s]")
    ax[0].set_title("Window-limited rate, Linux kernel")
    ax[0].legend(fontsize=8, title="RTT")
    ax[0].grid(True, which="major", alpha=0.3)
    ax[1].axhspan(1 - RATIO_MARGIN, 1 + RATIO_MARGIN, color="tab:green", alpha=0.12, label=f"±{RATIO_MARGIN:.0%}")
    ax[1].axhline(1.0, color="black", lw=1)
    ax[1].set_xlabel("advertised window (tcpi_snd_wnd) [kB]")
    ax[1].set_ylabel("measured / (window / min RTT)")
    ax[1].set_title("Ratio per transfer")
    ax[1].legend(fontsize=8)
    ax[1].grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig

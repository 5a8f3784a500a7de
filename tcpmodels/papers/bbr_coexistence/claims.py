"""The claims of the BBR coexistence validation, stated before any run (``git log`` dates them).

Ware, Mukerjee, Seshan, Sherry, "Modeling BBR's Interactions with Loss-Based Congestion Control",
IMC 2019 (the model: :mod:`tcpmodels.models.bbr`), and Hock, Bless, Zitterbart, ICNP 2017 (the
standing queue of BBR flows alone). Each :class:`~tcpmodels.stats.ClaimSpec` below fixes the
quantity, its direction and the smallest effect that matters, with where that number comes from;
:func:`tcpmodels.papers.bbr_coexistence.claims` judges them on the dataset.

Definitions (ours; the paper's text was not available here, only its equations and the authors'
summary of the results):

* **BBR's share** of a run: the bytes the BBR flows delivered over the measurement window divided
  by the bytes all flows delivered (the link is full in every run, so this is also the share of
  the link the model predicts); the **model error** of a grid point is
  ``mean share over its repetitions - ware_bbr_share(c, l, q, N)``.
* A **grid point** is (competitor, number of loss-based flows M, X, N) at 10 Mbit/s x 40 ms.
"""

from __future__ import annotations

from tcpmodels.stats import ClaimSpec

__all__ = ["PAPER_MEDIAN_ERROR", "SPECS", "spec"]

#: the model's median absolute error on the authors' testbed, per competitor (the authors' blog:
#: "a median error of 5% [against Cubic] and 8% for Reno"); read here as 0.05 and 0.08 of the link. [-]
PAPER_MEDIAN_ERROR = {"cubic": 0.05, "reno": 0.08}
#: the competitors as the claims name them
_COMPETITOR_NAME = {"cubic": "CUBIC", "reno": "Reno"}

_SAYS_ERROR = ("the model predicts BBR's throughput against loss-based flows with a median error of "
               "5 % against CUBIC and 8 % against Reno (Ware et al., Sec. 5; authors' blog)")

SPECS: dict[str, ClaimSpec] = {
    # (a) the model is as good against this kernel as against the authors' testbed, per competitor
    **{f"a_{cc}": ClaimSpec(
        claim="W1 Model error no larger than the paper's",
        part=f"vs 1 {_COMPETITOR_NAME[cc]} flow",
        paper_says=_SAYS_ERROR,
        quantity=f"{error:g} - median over grid points of |BBR share (kernel) - model (eq. 10)| [-]",
        direction=+1, smallest_effect=0.01,
        effect_source="the paper prints the median error as a whole percent: 1 point is its precision")
       for cc, error in PAPER_MEDIAN_ERROR.items()},
    # (b) the number of loss-based flows does not matter
    "b": ClaimSpec(
        claim="W2 BBR's share does not depend on the number of loss-based flows",
        part="share with M CUBIC flows - share with 1 CUBIC flow (one row per X and M)",
        paper_says="BBR's throughput when competing with loss-based algorithms does not depend on the number "
                   "of competing loss-based flows (Ware et al., Sec. 4-5; none of eqs. 6-11 has M in it)",
        quantity="BBR share (M CUBIC flows) - BBR share (1 CUBIC flow) [-]",
        smallest_effect=0.05,
        effect_source="the paper's median model error against CUBIC (5 %): a dependence smaller than the "
                      "model's own error would not change what the model explains"),
    # (c) ProbeRTT lasts q/c + 0.2 s + l, linear in the queue
    "c_time": ClaimSpec(
        claim="W3 ProbeRTT time is linear in the queue (eq. 11)",
        part="one ProbeRTT episode / (q/c + 0.2 + l) - 1, per run",
        paper_says="each ProbeRTT waits for the full queue to drain, holds 4 packets 200 ms and one round "
                   "trip: (q/c + 0.2 + l) per episode, about every 10 s (Ware et al., eq. 11)",
        quantity="mean ProbeRTT episode of the BBR flows / (q/c + 0.2 + l) - 1 [-]",
        smallest_effect=0.25,
        effect_source="argued: at X <= 16 (q/c <= 0.64 s) a 25 % error in one episode moves eq. 10's share "
                      "by at most 0.25 x 0.88 s / 10 s = 2.2 points, below the paper's 5 % median error"),
    "c_slope": ClaimSpec(
        claim="W3 ProbeRTT time is linear in the queue (eq. 11)",
        part="slope of the episode on q/c over runs, within 0.25 of 1",
        paper_says="ProbeRTT time increases linearly with queue size, slope 1 on q/c (eq. 11)",
        quantity="0.25 - |OLS slope of the mean episode [s] on q/c [s] - 1| [-]",
        direction=+1, smallest_effect=0.05,
        effect_source="the margin 0.25 as for the episode time; 0.05 its tenth part of two digits"),
    # (d) the standing queue of N BBR flows alone
    "d": ClaimSpec(
        claim="W4 N BBR flows alone keep about one BDP of standing queue",
        part="measured standing queue - model, in BDPs, per run",
        paper_says="several BBR flows on one bottleneck each over-estimate their share and are held by "
                   "their in-flight cap of 2 BDP: about one BDP of standing queue (Hock et al., Sec. IV); "
                   "more when 4N packets exceed the BDP (Ware et al., eq. 6)",
        quantity="(median smoothed RTT - base RTT) x c - bbr_standing_queue_packets, in BDPs [-]",
        smallest_effect=0.5,
        effect_source="'about one BDP' read as within half a BDP (Hock et al. give no tolerance)"),
}


def spec(key: str, engine: str = "kernel") -> ClaimSpec:
    """The spec ``key`` of :data:`SPECS` for an engine (``ns3`` rows name the engine in the claim).

    Parameters
    ----------
    key : str
        A key of :data:`SPECS`.
    engine : {"kernel", "ns3"}
        The engine judged.

    Returns
    -------
    ClaimSpec
        The spec with its ``claim`` prefixed by the engine (``[kernel]``, ``[ns-3]``) and, for ns-3,
        ``kernel`` in its quantity replaced by ``ns-3 TcpBbr``.

    Raises
    ------
    KeyError
        If ``key`` is not in :data:`SPECS`, or ``engine`` is neither.
    """
    from dataclasses import replace

    s = SPECS[key]
    if engine == "kernel":
        return replace(s, claim=f"[kernel] {s.claim}")
    if engine != "ns3":
        raise KeyError(f"engine must be 'kernel' or 'ns3'; got {engine!r}")
    return replace(s, claim=f"[ns-3] {s.claim}", quantity=s.quantity.replace("kernel", "ns-3 TcpBbr"))

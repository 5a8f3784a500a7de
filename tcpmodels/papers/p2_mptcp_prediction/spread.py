"""Where P2's Fraction of RPE can be tested: the pilot's choice of a setting with the paper's spread (issue 57, item 4).

On the shipped setting the MPTCP data throughput hardly depends on the RTTs, so always predicting its mean
already hits within 10 % for most RTT pairs and the Fraction-of-RPE parts of C2.2-C2.4 are not testable.
The pilot (:mod:`tcpmodels.experiments.p2.spread`) measured the MPTCP data transfer under per-path random
loss and chose, by a rule fixed before it ran, the smallest loss whose constant predictor hits at most 60 %
of the pairs (headroom of at least 40 points against the paper's largest gain, 38.6). This module reads
that choice from the shipped dataset (``p2_spread_pilot.parquet`` and its provenance JSON).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p2_spread_pilot import SCHEMA

__all__ = ["load_spread_pilot", "spread_section"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    data_dir : str or Path
        The ``data`` folder.
""")


@_PARAMETERS.fill
def load_spread_pilot(data_dir: str | Path = "data") -> tuple[pd.DataFrame, dict] | None:
    """The pilot's samples and the rule's choice, or None when the dataset is not shipped.

    Parameters
    ----------
    {data_dir}

    Returns
    -------
    tuple of (pandas.DataFrame, dict) or None
        One row per sample (``loss_rate`` [-], ``rtt1_ms``, ``rtt2_ms`` [ms], ``rate_bps`` [bit/s]) and the
        provenance's ``choice`` (``by_loss``: per loss rate the constant predictor's hits [-], samples, mean
        rate [bit/s] and coefficient of variation; ``chosen``, ``testable``, ``rule``).
    """
    if not SCHEMA.present(data_dir, ("",)):
        return None
    tables = SCHEMA.read(data_dir, ("",))
    return tables[""], tables["provenance"]["choice"]


@_PARAMETERS.fill
def spread_section(data_dir: str | Path = "data") -> str:
    """The notebook's paragraph on the pilot: hits per loss rate and the setting chosen (Markdown).

    Parameters
    ----------
    {data_dir}

    Returns
    -------
    str
        Markdown; a sentence saying the pilot is not shipped when it is not.
    """
    pilot = load_spread_pilot(data_dir)
    if pilot is None:
        return ("**A setting where the Fraction of RPE can be tested**: the pilot has no shipped dataset "
                "(`python -m tcpmodels.experiments.p2.spread`).")
    rows, c = pilot
    per = "; ".join(f"loss {float(k):g}: the constant predictor hits {v['constant_hits']:.0%} of {v['samples']} pairs "
                    f"(mean {v['rate_mean_bps'] / 1e6:.1f} Mbit/s, cv {v['rate_cv']:.2f})"
                    for k, v in sorted(c["by_loss"].items(), key=lambda kv: float(kv[0])))
    verdict = (f"so the parts become testable at loss {float(c['chosen']):g}: the claims judged there are the next "
               "stage (not run yet)" if c["testable"] else
               "so no candidate leaves the room the paper's gains need: the parts stay not testable")
    return (f"**A setting where the Fraction of RPE can be tested** (pilot, per-path random loss, MPTCP data only, "
            f"{len(rows)} samples): {per}; {verdict}. Rule, fixed before the pilot: {c['rule']}.")

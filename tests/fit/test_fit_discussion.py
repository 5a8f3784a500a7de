"""The prose Discussion of ``fit_models_to_traces.ipynb`` quotes numbers from the shipped dataset.

Prose cannot be computed, so this test keeps it honest: the headline numbers in bold are
recomputed from ``data/datasets/fit_*`` and must equal the quoted values at the quoted
precision. When the dataset is rebuilt, this fails and names the sentence to update.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tcpmodels.fit import report

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "fit_models_to_traces.ipynb"


@pytest.fixture(scope="module")
def discussion() -> str:
    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "markdown"]
    found = [s for s in cells if s.startswith("## Discussion")]
    assert len(found) == 1, f"{NOTEBOOK.name}: expected one '## Discussion' cell, found {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def dataset() -> dict:
    return report.load(ROOT / "data")


def _quoted(text: str, pattern: str) -> list[str]:
    match = re.search(pattern, text, flags=re.S)
    assert match, f"{NOTEBOOK.name} Discussion: no sentence matching {pattern!r}"
    return list(match.groups())


def _same(quoted: str, value: float, what: str) -> None:
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    assert f"{value:.{decimals}f}" == quoted, (
        f"{NOTEBOOK.name} Discussion quotes {what} = {quoted}, the shipped dataset gives {value:.{decimals}f}; "
        "update the sentence"
    )


def test_mathis_constant_matches_dataset(discussion, dataset):
    c, low, high = _quoted(discussion, r"Fitted C for Reno: \*\*([\d.]+)\s+\[([\d.]+), ([\d.]+)\]\*\*")
    fits = report.mathis_fits(dataset["flows"]).set_index("subset")
    row = fits.loc["reno, CA + link-limited"]
    _same(c, row["c"], "Mathis C (Reno, CA + link-limited)")
    _same(low, row["c_low"], "its lower 95 % bound")
    _same(high, row["c_high"], "its upper 95 % bound")


def test_cubic_point_estimates_match_dataset(discussion, dataset):
    (n_epochs,) = _quoted(discussion, r"little loss; (\d+) epochs\)")
    (c,) = _quoted(discussion, r"\*\*C = ([\d.]+) \[")
    (beta,) = _quoted(discussion, r"\*\*beta_cubic =\s+([\d.]+) \[")
    fit, _, _ = report.cubic_fits(dataset["epochs"], dataset["tcpinfo"], n_boot=0, seed=0, min_bdp_segments=40,
                                  settings=["buf", "r0.1"])
    assert int(n_epochs) == fit.n_epochs, f"Discussion quotes {n_epochs} large-window epochs, dataset has {fit.n_epochs}"
    _same(c, fit.c, "CUBIC C (large windows)")
    _same(beta, fit.beta_cubic, "CUBIC beta_cubic (large windows)")

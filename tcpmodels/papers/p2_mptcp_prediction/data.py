"""P2 data: the paper's printed values, the dataset and its loader, the model inputs (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.base import BaseEstimator

from tcpmodels._docstrings import SharedEntries
from tcpmodels.datasets.p2 import SCHEMA
from tcpmodels.predict import fraction_rpe_within, rmse

__all__ = [
    "CITATION", "KB_BYTES", "PAPER_TABLE2", "PAPER_TABLE3", "PAPER_TABLE4", "PAPER_TABLE5", "PAPER_TABLE6",
    "PAPER_SPEARMAN", "PAPER_FIG4_SHARE_150_120_256MB", "PAPER_N_SAMPLES", "RTT_RELATIONS", "MPTCP_PROBES",
    "PROBE_TOTALS", "P2Dataset", "load_dataset", "check_dataset", "x_existing", "x_proposed", "fit_training_error",
    "rtt_relation", "kbps", "sd_kbps", "conditions_table",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    df : pandas.DataFrame
        Complete samples (:func:`check_dataset`).
""")

CITATION = ("T. Hamazaki, H. Abe, K. Kato, 'Linux MPTCP カーネルによるネットワークスループット予測に関する研究', "
            "IPSJ SIG technical report, 2015")

#: bytes per KB in the paper's unit KB/s (and in its probe sizes)
KB_BYTES = 1024
#: samples of the paper's data set (16 x 16 RTT pairs, twice)
PAPER_N_SAMPLES = 512

#: Table 2 (existing method, 64 KB probe, 256 MB data, training error): target -> (RMSE [KB/s], Fraction of RPE [-])
PAPER_TABLE2 = {"MPTCP transfer": (6126.4, 0.557), "TCP transfer": (3029.9, 0.943)}
#: Table 3 (proposed method, training error): total probe size -> (RMSE [KB/s], Fraction of RPE [-])
PAPER_TABLE3 = {"128KB": (4884.8, 0.777), "256KB": (4902.9, 0.775), "512KB": (4955.7, 0.775)}
#: Table 4 (existing method by MPTCP probe size, training error): size -> (RMSE [KB/s], Fraction of RPE [-])
PAPER_TABLE4 = {"128KB": (6891.8, 0.475), "256KB": (6811.4, 0.496), "512KB": (6740.6, 0.511),
                "2MB": (6297.5, 0.533), "8MB": (5900.9, 0.582), "32MB": (5234.2, 0.721), "128MB": (4724.1, 0.756)}
#: RTT relations of Table 5, in the paper's row order: (label, test on r = RTT2 / RTT1)
RTT_RELATIONS = (
    ("RTT2/RTT1 > 1.2", lambda r: r > 1.2),
    ("1.2 >= RTT2/RTT1 > 1.1", lambda r: (r <= 1.2) & (r > 1.1)),
    ("1.1 >= RTT2/RTT1 > 1", lambda r: (r <= 1.1) & (r > 1.0)),
    ("RTT1 = RTT2", lambda r: r == 1.0),
    ("1.1 >= RTT1/RTT2 > 1", lambda r: (1 / r <= 1.1) & (1 / r > 1.0)),
    ("1.2 >= RTT1/RTT2 > 1.1", lambda r: (1 / r <= 1.2) & (1 / r > 1.1)),
    ("RTT1/RTT2 > 1.2", lambda r: 1 / r > 1.2),
)
#: Table 5 (Fraction of RPE by RTT relation, total 128 KB probe): relation -> (proposed, existing) [-]
PAPER_TABLE5 = {"RTT2/RTT1 > 1.2": (0.842, 0.855), "1.2 >= RTT2/RTT1 > 1.1": (0.866, 0.761),
                "1.1 >= RTT2/RTT1 > 1": (0.756, 0.720), "RTT1 = RTT2": (0.903, 0.613),
                "1.1 >= RTT1/RTT2 > 1": (0.890, 0.280), "1.2 >= RTT1/RTT2 > 1.1": (0.866, 0.254),
                "RTT1/RTT2 > 1.2": (0.408, 0.658)}
#: Table 6 (proposed method, generalisation error): training share -> (RMSE [KB/s], Fraction of RPE [-])
PAPER_TABLE6 = {0.75: (3702.2, 0.787), 0.50: (4812.8, 0.791), 0.25: (4946.6, 0.762), 0.10: (5199.1, 0.734),
                0.05: (5206.9, 0.644)}
#: Sec. 5.3: Spearman rho between 64 KB probe and 256 MB data throughput
PAPER_SPEARMAN = {"TCP": 0.87, "MPTCP": 0.16}
#: Sec. 5.2 / Fig. 4: subflow-1 share of a 256 MB transfer at RTT1 = 150 ms, RTT2 = 120 ms
PAPER_FIG4_SHARE_150_120_256MB = 0.339

MPTCP_PROBES = ("64KB", "128KB", "256KB", "512KB", "2MB", "8MB", "32MB", "128MB")
PROBE_TOTALS = ("128KB", "256KB", "512KB")


def _part_rate_bps(part: dict) -> float | None:
    """Path rate [bit/s] of one provenance part (its ``config``), None where the part does not say."""
    return (part.get("config") or {}).get("rate_bps")


@dataclass(frozen=True)
class P2Dataset:
    """The P2 campaign's data: one row per sample, the Fig. 4 sweep, provenance.

    Attributes
    ----------
    samples : pandas.DataFrame
        One row per (repetition, RTT pair): ``rtt1_ms, rtt2_ms`` [ms], and per transfer
        ``<name>_Bps`` [bytes/s] and, for MPTCP transfers, ``<name>_share1`` [-]
        (see :func:`tcpmodels.experiments.p2.samples_frame`).
    fig4 : pandas.DataFrame
        One row per Fig. 4 transfer: ``rtt1_ms, rtt2_ms, rep, size_bytes, share1, Bps``.
    provenance : dict
        The campaign's provenance JSON (config, scaling, wall time, host, tools).
    """

    samples: pd.DataFrame
    fig4: pd.DataFrame = field(default_factory=pd.DataFrame)
    provenance: dict = field(default_factory=dict)

    @property
    def ccs(self) -> list[str]:
        """The subflow congestion controls present in ``samples`` (``cubic`` first; ``["cubic"]`` without a
        ``cc`` column: the samples shipped before it existed).

        Returns
        -------
        list of str
            Sorted, ``cubic`` first.
        """
        if "cc" not in self.samples.columns:
            return ["cubic"]
        return sorted(set(self.samples["cc"].dropna()), key=lambda c: (c != "cubic", c))

    @property
    def settings(self) -> pd.DataFrame:
        """The measured settings, one row per provenance part: ``cc``, ``data_size_bytes``,
        ``path_rate_bps`` [bit/s] and ``n_samples``, in the provenance's order.

        Returns
        -------
        pandas.DataFrame
            Empty (with those columns) for a provenance without ``parts``.
        """
        rows = [{"cc": p.get("cc"), "data_size_bytes": p.get("data_size_bytes"),
                 "path_rate_bps": _part_rate_bps(p),
                 "n_samples": p.get("n_samples_kept", p.get("n_samples", 0))}
                for p in self.provenance.get("parts", [])]
        return pd.DataFrame(rows, columns=["cc", "data_size_bytes", "path_rate_bps", "n_samples"])

    def for_cc(self, cc: str, *, rate_bps: float | None = None) -> "P2Dataset":
        """The samples (and Fig. 4 rows) of one subflow congestion control, with that setting's provenance.

        Parameters
        ----------
        cc : str
            ``cubic`` (uncoupled), ``tm_lia`` or ``tm_olia``.
        rate_bps : float, optional
            Path rate of the setting [bit/s] (see :attr:`settings`), e.g. to contrast two controls
            at one rate. Default: the setting of ``cc`` with most samples, the faster one on a tie.

        Returns
        -------
        P2Dataset
            ``samples`` and ``fig4`` of ``cc`` (all rows where there is no ``cc`` column, as for the
            samples shipped before it); ``provenance``: the provenance part of the chosen setting (the
            samples of its data size and path rate; Fig. 4 rows of that path rate where they carry
            one), with the whole file's ``host`` where the part has none. A provenance without
            ``parts`` is returned as it is.

        Raises
        ------
        ValueError
            If no sample has ``cc``, or ``cc`` was not measured at ``rate_bps``.
        """
        if cc not in self.ccs:
            raise ValueError(f"no P2 samples with cc {cc!r}; present: {self.ccs}")
        samples = self.samples[self.samples["cc"] == cc] if "cc" in self.samples.columns else self.samples
        fig4 = self.fig4
        if len(fig4) and "cc" in fig4.columns:
            fig4 = fig4[fig4["cc"] == cc]
        prov = self.provenance
        parts = [p for p in prov.get("parts", []) if p.get("cc") == cc]
        if parts and rate_bps is not None:
            rates = sorted({_part_rate_bps(p) for p in parts} - {None})
            parts = [p for p in parts if _part_rate_bps(p) == rate_bps]
            if not parts:
                raise ValueError(f"rate_bps={rate_bps:g}: {cc} was measured at path rates {rates} bit/s only")
        if parts:
            part = max(parts, key=lambda p: (p.get("n_samples_kept", p.get("n_samples", 0)),
                                             _part_rate_bps(p) or 0))
            prov = {"host": prov.get("host", {}), **part}
            if "data_size_bytes" in samples.columns:
                samples = samples[samples["data_size_bytes"] == part["data_size_bytes"]]
            rate = _part_rate_bps(part)
            if rate is not None and "path_rate_bps" in samples.columns:
                samples = samples[samples["path_rate_bps"] == rate]
            if rate is not None and "path_rate_bps" in fig4.columns:
                fig4 = fig4[fig4["path_rate_bps"] == rate]
        return P2Dataset(samples=samples.reset_index(drop=True), fig4=fig4.reset_index(drop=True), provenance=prov)


def load_dataset(data_dir: str | Path = "data") -> P2Dataset:
    """Read ``datasets/p2_samples.parquet``, ``p2_fig4.parquet`` and ``p2_provenance.json`` under ``data_dir``.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory (the files are in its ``datasets`` subdirectory).

    Returns
    -------
    P2Dataset
        The samples; ``fig4`` empty and ``provenance`` ``{}`` when their files are absent.

    Raises
    ------
    FileNotFoundError
        Naming the missing file and the command that writes it.
    """
    parts = SCHEMA.read(data_dir, ("samples",), optional=("fig4",))
    samples, fig4, prov = parts["samples"], parts.get("fig4", pd.DataFrame()), parts["provenance"]
    if "cc" not in samples.columns:  # written before the cc column: one setting, the provenance's config
        cfg = prov.get("config", {})
        samples = samples.assign(cc=cfg.get("cc", "cubic"), data_size_bytes=cfg.get("data_size_bytes"),
                                 path_rate_bps=cfg.get("rate_bps"))
    return P2Dataset(samples=samples, fig4=fig4, provenance=prov)


def check_dataset(dataset: P2Dataset) -> pd.DataFrame:
    """The samples with every model input and target present and finite, after checking the columns.

    Parameters
    ----------
    dataset : P2Dataset
        The campaign's data.

    Returns
    -------
    pandas.DataFrame
        The complete rows of ``dataset.samples``, index reset.

    Raises
    ------
    TypeError
        If ``dataset`` is not a :class:`P2Dataset`.
    ValueError
        If a needed column is missing, the samples mix settings (congestion control, data size, path rate:
        one SVR across them would fit the setting, not the probes; :meth:`P2Dataset.for_cc` picks one), or
        fewer than 10 complete samples remain (too few to fit an SVR).
    """
    if not isinstance(dataset, P2Dataset):
        raise TypeError(f"dataset must be a P2Dataset (see load_dataset); got {type(dataset).__name__}")
    need = ["rtt1_ms", "rtt2_ms", "mptcp_data_Bps", "tcp_data_Bps", "path_probe_128KB_path1_Bps",
            "path_probe_128KB_path2_Bps"] + [f"mptcp_probe_{s}_Bps" for s in MPTCP_PROBES]
    missing = [c for c in need if c not in dataset.samples.columns]
    if missing:
        raise ValueError(f"dataset.samples lacks columns {missing}")
    df = dataset.samples
    keys = [c for c in ("cc", "data_size_bytes", "path_rate_bps") if c in df.columns]
    settings = df[keys].drop_duplicates() if keys else df.iloc[:1]
    if len(settings) > 1:
        listed = "; ".join(", ".join(f"{k}={v}" for k, v in row.items()) for row in settings.to_dict("records"))
        raise ValueError(f"dataset.samples mixes {len(settings)} settings ({listed}); analyse one at a time, "
                         "e.g. dataset.for_cc('tm_lia') (the congestion control's setting with most samples)")
    ok = np.isfinite(df[[c for c in need if c.endswith("_Bps")]].to_numpy(float)).all(axis=1)
    df = df[ok].reset_index(drop=True)
    if len(df) < 10:
        raise ValueError(f"dataset.samples has {len(df)} complete samples; at least 10 are needed to fit an SVR")
    return df


@_PARAMETERS.fill
def x_existing(df: pd.DataFrame, label: str) -> np.ndarray:
    """The existing method's model input: one MPTCP probe's throughput per sample.

    Parameters
    ----------
    {df}
    label : str
        Probe size, one of :data:`MPTCP_PROBES` (e.g. ``"64KB"``).

    Returns
    -------
    numpy.ndarray
        Shape ``(n_samples, 1)``, the probe's throughput. [bit/s]
    """
    return df[[f"mptcp_probe_{label}_Bps"]].to_numpy(float) * 8


@_PARAMETERS.fill
def x_proposed(df: pd.DataFrame, total: str) -> np.ndarray:
    """The proposed method's model input: the two per-path TCP probes' throughputs per sample.

    Parameters
    ----------
    {df}
    total : str
        Total probe size over both paths, one of :data:`PROBE_TOTALS` (e.g. ``"128KB"``).

    Returns
    -------
    numpy.ndarray
        Shape ``(n_samples, 2)``: path 1, path 2. [bit/s]
    """
    return df[[f"path_probe_{total}_path1_Bps", f"path_probe_{total}_path2_Bps"]].to_numpy(float) * 8


def fit_training_error(estimator: BaseEstimator, X: np.ndarray, y_bps: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Fit on all samples and evaluate on the same (the paper's "training error").

    Parameters
    ----------
    estimator : sklearn estimator
        A regressor with ``fit`` and ``predict`` (e.g. :class:`tcpmodels.predict.SingleProbeSVR`);
        it is fitted in place.
    X : numpy.ndarray
        Model input, shape ``(n_samples, n_features)``. [bit/s]
    y_bps : numpy.ndarray
        Target throughput per sample. [bit/s]

    Returns
    -------
    tuple
        ``(rmse [KB/s], fraction of RPE within 10 % [-], predictions [bit/s])``.
    """
    pred = estimator.fit(X, y_bps).predict(X)
    return rmse(y_bps, pred) / 8 / KB_BYTES, fraction_rpe_within(y_bps, pred), pred


def rtt_relation(rtt1_ms: npt.ArrayLike, rtt2_ms: npt.ArrayLike) -> np.ndarray:
    """Table 5's RTT-relation label of each sample (configured RTTs).

    Parameters
    ----------
    rtt1_ms, rtt2_ms : array_like
        Configured RTT of path 1 and of path 2 per sample (only their ratio matters). [ms]

    Returns
    -------
    numpy.ndarray
        Object array of labels from :data:`RTT_RELATIONS` (``""`` where none applies, e.g. NaN).
    """
    r = np.asarray(rtt2_ms, float) / np.asarray(rtt1_ms, float)
    out = np.full(r.shape, "", dtype=object)
    for label, test in RTT_RELATIONS:
        out[test(r)] = label
    return out


def kbps(bytes_per_s: float) -> float:
    """A throughput in bytes/s in the paper's unit KB/s (1 KB = :data:`KB_BYTES` = 1024 bytes).

    Parameters
    ----------
    bytes_per_s : float
        Throughput. [bytes/s]

    Returns
    -------
    float
        Throughput. [KB/s]
    """
    return float(bytes_per_s) / KB_BYTES


def sd_kbps(y_bps: npt.ArrayLike) -> float:
    """Population standard deviation of throughputs given in bit/s, in KB/s: the RMSE of predicting the mean.

    Parameters
    ----------
    y_bps : array_like
        Throughputs. [bit/s]

    Returns
    -------
    float
        Their standard deviation (ddof = 0). [KB/s]
    """
    return float(np.std(np.asarray(y_bps, float))) / 8 / KB_BYTES



def conditions_table(dataset: P2Dataset) -> pd.DataFrame:
    """The regime issue 17 asks of every sample, per subflow congestion control and data size.

    The conditions are columns of the dataset (computed per sample by the campaign's ``dataset``
    command from the measured RTTs, throughputs and interface bytes; limits in the provenance's
    ``condition_limits``): data size / the larger path's BDP >= 10; MPTCP data throughput / the path
    rate > 1; share of the 64 KB MPTCP probe's bytes on subflow 2 < 0.05.

    Parameters
    ----------
    dataset : P2Dataset
        All samples (every ``cc``).

    Returns
    -------
    pandas.DataFrame
        One row per (``cc``, ``data_size_bytes``): ``n``, the median (and min / max) of
        ``data_over_bdp``, ``mptcp_over_path_rate``, ``mptcp_over_tcp_data``, ``probe64_share2`` [-],
        the share of samples meeting each condition and all three [-], and ``subflow_cc_seen``.

    Raises
    ------
    ValueError
        If the samples or the provenance lack the conditions (a dataset written before them).
    """
    df = dataset.samples
    cols = ("data_over_bdp", "mptcp_over_path_rate", "mptcp_over_tcp_data", "probe64_share2", "conditions_hold")
    lim = dataset.provenance.get("condition_limits")
    if any(c not in df.columns for c in cols) or not lim:
        raise ValueError("the P2 dataset has no regime conditions; rebuild it with "
                         "`python -m tcpmodels.experiments.p2 dataset --records ... --out data/datasets`")
    rows = []
    for (cc, size), g in df.groupby(["cc", "data_size_bytes"], sort=False):
        row = {"cc": cc, "data_size_MiB": size / 2**20, "path_rate_Mbps": float(g["path_rate_bps"].iloc[0]) / 1e6,
               "n": len(g)}
        for col in cols[:-1]:
            v = g[col].astype(float)
            row[f"{col}_median"], row[f"{col}_min"], row[f"{col}_max"] = v.median(), v.min(), v.max()
        row["share_data_over_bdp_ok"] = float((g["data_over_bdp"] >= lim["data_over_bdp_min"]).mean())
        row["share_mptcp_over_path_rate_ok"] = float((g["mptcp_over_path_rate"] > lim["mptcp_over_path_rate_min"]).mean())
        row["share_probe64_share2_ok"] = float((g["probe64_share2"] < lim["probe_share2_max"]).mean())
        row["share_all_ok"] = float(g["conditions_hold"].astype(bool).mean())
        seen = g["subflow_cc"].dropna() if "subflow_cc" in g.columns else pd.Series(dtype=object)
        row["subflow_cc_seen"] = ",".join(sorted(set(seen))) if len(seen) else "not recorded"
        rows.append(row)
    return pd.DataFrame(rows)

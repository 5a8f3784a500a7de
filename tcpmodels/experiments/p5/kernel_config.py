"""The setting of P5's kernel campaign and the layout of its runs folder.

The campaign (:mod:`tcpmodels.experiments.p5.kernel`): one testbed run per Pareto shape alpha
and run seed, Poisson arrivals of Pareto-sized Reno downloads through one bottleneck; its
dataset is :mod:`tcpmodels.experiments.p5.kernel_dataset`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.campaign_config import CampaignConfig
from tcpmodels.records import JsonlRecords

__all__ = ["TestbedP5Config", "DEFAULT_KERNEL_CONFIG", "TESTBED_SERVER_ADDR", "KEY_FIELDS", "counts_name",
           "kernel_records", "read_kernel_records"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    runs_dir : str or Path
        Campaign folder.
""")

#: Address of the server ``s`` in :func:`tcpmodels.testbed.single_link`; it sends the downloads.
TESTBED_SERVER_ADDR = "10.0.1.2"


@dataclass(frozen=True)
class TestbedP5Config(CampaignConfig):
    """One testbed run per alpha: Poisson arrivals of Pareto-sized Reno downloads through one bottleneck.

    Parameters
    ----------
    alphas : tuple of float
        Pareto shapes, each in (1, 2) (P5: 1.05, 1.35, 1.65, 1.95). [-]
    rate_bps : float
        Bottleneck rate (tbf, each direction). [bit/s]
    rtt_s : float
        Round-trip propagation delay added by the delay element. [s]
    buffer_bytes : int
        Drop-tail buffer at the bottleneck. [bytes]
    mean_size_bytes : float
        Mean download size (P5: 10 KB; larger here so that the sessions, not
        handshakes, make the traffic). [bytes]
    load : float
        Offered load ``arrival rate x mean size / rate`` in (0, 1); the arrival
        rate follows from it. With alpha near 1 a finite sample's mean is far
        below ``mean_size_bytes``, so the realised load is lower. [-]
    duration_s : float
        Arrivals happen in [0, duration_s); the count series covers the same span. [s]
    bin_s : float
        Bin of the packet-count series. [s]
    cc : str
        Congestion control of every download (``reno``: P5's NewReno). [-]
    seed : int
        Base seed of the arrival times and sizes: run ``r`` (of ``seeds``) at alpha i
        uses ``seed + i + 1000 r`` (run 0 is the campaign's first, which used ``seed + i``).
    seeds : tuple of int
        Runs per alpha, by run seed ``r`` (each >= 0).
    """

    alphas: tuple[float, ...] = (1.05, 1.35, 1.65, 1.95)
    rate_bps: float = 10e6
    rtt_s: float = 0.03
    buffer_bytes: int = 75_000
    mean_size_bytes: float = 50_000.0
    load: float = 0.5
    duration_s: float = 200.0
    bin_s: float = 0.01
    cc: str = "reno"
    seed: int = 0
    seeds: tuple[int, ...] = (0, 1)

    def __post_init__(self) -> None:
        if not self.alphas or not all(1.0 < float(a) < 2.0 for a in self.alphas):
            raise ValueError(f"alphas [-] must each be in (1, 2); got {self.alphas!r}")
        for name in ("rate_bps", "rtt_s", "buffer_bytes", "mean_size_bytes", "duration_s", "bin_s"):
            if not float(getattr(self, name)) > 0:
                raise ValueError(f"{name} must be > 0; got {getattr(self, name)!r}")
        if not self.seeds or not all(isinstance(r, int) and r >= 0 for r in self.seeds):
            raise ValueError(f"seeds must be integers >= 0; got {self.seeds!r}")
        if not 0.0 < self.load < 1.0:
            raise ValueError(f"load [-] must be in (0, 1); got {self.load!r}")
        if self.duration_s / self.bin_s < 512:
            raise ValueError(f"duration_s / bin_s must give >= 512 bins for the Hurst estimators; "
                             f"got {self.duration_s} / {self.bin_s} = {self.duration_s / self.bin_s:.0f}")

    @property
    def arrival_rate_per_s(self) -> float:
        """Download arrivals per second that offer ``load`` of the bottleneck. [1/s]"""
        return self.load * self.rate_bps / 8.0 / self.mean_size_bytes

    def derived_fields(self) -> dict:
        """The derived ``arrival_rate_per_s`` [1/s], which :meth:`to_dict` adds to the fields.

        Returns
        -------
        dict
            ``{"arrival_rate_per_s": ...}``.
        """
        return {"arrival_rate_per_s": self.arrival_rate_per_s}


DEFAULT_KERNEL_CONFIG = TestbedP5Config()

#: Fields that identify a run in ``<runs_dir>/records.jsonl`` (a record without ``seed`` is run 0).
KEY_FIELDS = ("alpha", "seed")


def counts_name(alpha: float, seed: int) -> str:
    """File name of a run's packet-count series in the runs folder.

    Parameters
    ----------
    alpha : float
        Pareto shape of the run. [-]
    seed : int
        Run seed ``r`` (0: the campaign's first runs, named without it).

    Returns
    -------
    str
        ``alpha<a>_counts.npy`` for run 0, ``alpha<a>_s<seed>_counts.npy`` after.
    """
    return f"alpha{alpha:.2f}_counts.npy" if seed == 0 else f"alpha{alpha:.2f}_s{seed}_counts.npy"


@_PARAMETERS.fill
def kernel_records(runs_dir: str | Path) -> JsonlRecords:
    """The durable records of a runs folder, keyed by :data:`KEY_FIELDS`.

    Parameters
    ----------
    {runs_dir}

    Returns
    -------
    JsonlRecords
        ``<runs_dir>/records.jsonl``.
    """
    return JsonlRecords(Path(runs_dir) / "records.jsonl", KEY_FIELDS)


@_PARAMETERS.fill
def read_kernel_records(runs_dir: str | Path) -> list[dict]:
    """The records of ``runs_dir``, ``seed`` 0 filled in where the first campaign did not write it.

    Parameters
    ----------
    {runs_dir}

    Returns
    -------
    list of dict
        One record per finished run, in file order; empty without ``records.jsonl``. A torn line (a run
        killed mid-write) is skipped, as every campaign's records skip it (:meth:`JsonlRecords.read`).
    """
    return [{"seed": 0, **r} for r in kernel_records(runs_dir).read()]

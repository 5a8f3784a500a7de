"""Campaign of paper P4 (LFTCP press release): the window-limited rate ``window / RTT`` measured on the kernel.

The press release's 29 Gbit/s is TCP's largest window (65,535 x 2^14 bytes)
per 296 ms round trip. What one machine can test is the relation itself: on
one link ``c -- s`` (:func:`~tcpmodels.testbed.topologies.single_link`, a
user-space delay element for the RTT and a ``tbf`` rate limiter at
``link_rate_bps``, far above every cell's rate so that the window, not the
link, limits), ``c`` uploads to ``s`` for a few seconds per sample with the
receiver's buffer capped by ``net.ipv4.tcp_rmem`` (its namespace's maximum,
changed between samples with :meth:`tcpmodels.testbed.Testbed.set_sysctls`;
the traffic server restarts so its listening socket starts under the new cap).

Linux does not advertise the cap: the window is ``tcp_win_from_space`` of the
receive buffer, the buffer times the ratio of payload to memory charged per
packet (``scaling_ratio`` since Linux 6.4; ``tcp_adv_win_scale`` before), and
``SO_RCVBUF = B`` would set the buffer to 2B of which again only a part is
advertised. So the campaign measures the advertised window on the sender
(``tcpi_snd_wnd`` in TCP_INFO, the receiver's window after scaling) and the
model's window is THAT; the cap and the naive model ``cap / RTT`` are kept
beside it. The rate is ``tcpi_bytes_acked`` over the span after the window's
plateau; the model is
:func:`tcpmodels.models.throughput.window_limited_throughput_bps` of the
median advertised window and the connection's ``min_rtt``.

Grid (:class:`~tcpmodels.experiments.p4.config.P4Config`): caps 64 KiB to
4 MiB x RTTs 18.5 to 296 ms, the cells whose ``cap x 8 / RTT`` is at most
120 Mbit/s (what the shared host carries through the delay element), three
repetitions, shuffled per repetition; a sample takes 10-16 s.

Modules: :mod:`~tcpmodels.experiments.p4.config`, :mod:`~tcpmodels.experiments.p4.kernel`
(plan, session, runner, per-sample table), :mod:`~tcpmodels.experiments.p4.dataset`
(Parquet + compressed records + provenance) and the command line in ``__main__``.

Command line (``kernel`` needs root)::

    python -m tcpmodels.experiments.p4 kernel --records runs/p4/kernel.jsonl
    python -m tcpmodels.experiments.p4 dataset --records runs/p4/kernel.jsonl --out data/datasets

References
----------
.. [1] University of Tokyo / JST press release, 11 December 2015 (LFTCP, 73 Gbit/s over 296 ms).
.. [2] RFC 7323, "TCP Extensions for High Performance", Sec. 2 (window scale).
"""

from tcpmodels.experiments.cli import package_main
from tcpmodels.experiments.p4.config import DEFAULT_CONFIG, SCHEMA, P4Config
from tcpmodels.experiments.p4.dataset import build_dataset
from tcpmodels.experiments.p4.kernel import (
    KERNEL_KEY,
    WindowSession,
    kernel_frame,
    kernel_plan,
    run_kernel_campaign,
    summarize_window_limited,
)

__all__ = ["P4Config", "DEFAULT_CONFIG", "SCHEMA", "KERNEL_KEY", "kernel_plan", "WindowSession",
           "run_kernel_campaign", "summarize_window_limited", "kernel_frame", "build_dataset", "main"]


#: ``main(argv=None) -> exit status``: the command line ``python -m`` runs (this package's ``__main__``)
main = package_main(__name__)

"""The in-kernel integer arithmetic, run in user space, and float references to check it against.

:class:`Harness` compiles ``harness.c`` (which includes the very ``tm_math.h`` the BPF
programs include) with gcc and evaluates cube roots, CUBIC's K, LIA's alpha, OLIA's
increase and the x(RTT) table lookup exactly as the kernel programs do.
:func:`olia_increase_segments` is the float OLIA reference (the models package has no OLIA).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from importlib import resources

import numpy as np
from numpy.typing import ArrayLike

from tcpmodels._docstrings import SharedEntries
from tcpmodels.testbed._system import TestbedError, cache_dir

__all__ = ["Harness", "olia_increase_segments", "OLIA_SLOTS"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    c_q10 : int
        CUBIC's C * 2^10. [segments/s^3 * 1024]
    windows_segments : sequence of int
        Window of each subflow (0: slot unused). [segments]
    rtts_us : sequence of int
        Smoothed RTT of each subflow. [us]
""")

#: subflows OLIA's set logic considers (``TM_OLIA_SLOTS`` in tm_math.h)
OLIA_SLOTS = 4


class Harness:
    """A running ``harness`` process; use as a context manager.

    Raises
    ------
    TestbedError
        No C compiler, or compilation failed.
    """

    def __init__(self) -> None:
        src = resources.files("tcpmodels.testbed.kernel_cc")
        parts = [src.joinpath(n).read_bytes() for n in ("harness.c", "tm_math.h")]
        digest = hashlib.sha256(b"".join(parts)).hexdigest()[:16]
        out = cache_dir() / "kernel_cc" / f"harness-{digest}"
        self.binary = out / "harness"
        if not self.binary.exists():
            compiler = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
            if not compiler:
                raise TestbedError("no C compiler (gcc) to build the arithmetic harness")
            out.mkdir(parents=True, exist_ok=True)
            for name, data in zip(("harness.c", "tm_math.h"), parts):
                (out / name).write_bytes(data)
            tmp = out / f".harness.{os.getpid()}"
            proc = subprocess.run([compiler, "-O2", "-Wall", "-o", str(tmp), str(out / "harness.c")],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise TestbedError(f"harness.c failed to compile: {proc.stderr}")
            os.replace(tmp, self.binary)
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> "Harness":
        self._proc = subprocess.Popen([str(self.binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      bufsize=1)
        return self

    def __exit__(self, *exc) -> None:
        if self._proc:
            self._proc.stdin.close()
            self._proc.wait(timeout=10)
            self._proc.stdout.close()
            self._proc = None

    def _ask(self, line: str) -> str:
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()
        answer = self._proc.stdout.readline().strip()
        if not answer:
            raise TestbedError(f"harness gave no answer to {line!r} (exit {self._proc.poll()})")
        return answer

    def cbrt(self, x: int) -> int:
        """floor(cbrt(x)) as ``tm_cbrt_u64`` computes it.

        Parameters
        ----------
        x : int
            Radicand, 0 <= x < 2^64. [-]

        Returns
        -------
        int
            The integer cube root. [-]
        """
        return int(self._ask(f"cbrt {int(x)}"))

    @_PARAMETERS.fill
    def cubic_k_hz(self, w_max: int, cwnd: int, c_q10: int, xf_q16: int) -> int:
        """CUBIC's K after a reduction from ``w_max`` to ``cwnd``, as tm_cubic_x computes it.

        Parameters
        ----------
        w_max : int
            Window before the reduction. [segments]
        cwnd : int
            Window after it. [segments]
        {c_q10}
        xf_q16 : int
            The x(RTT) factor of the reading * 2^16 (65536: plain CUBIC). [-]

        Returns
        -------
        int
            K. [1/1024 s]
        """
        return int(self._ask(f"k {w_max} {cwnd} {c_q10} {xf_q16}"))

    @_PARAMETERS.fill
    def cubic_delta_segments(self, offs_hz: int, c_q10: int) -> int:
        """The cubic term C (t - K)^3 for ``offs_hz`` = |t - K|, as tm_cubic_x computes it.

        Parameters
        ----------
        offs_hz : int
            |t - K|. [1/1024 s]
        {c_q10}

        Returns
        -------
        int
            The term, rounded down. [segments]
        """
        return int(self._ask(f"delta {offs_hz} {c_q10}"))

    @_PARAMETERS.fill
    def lia_alpha_q16(self, windows_segments: Sequence[int], rtts_us: Sequence[int]) -> int:
        """LIA's alpha (RFC 6356 Sec. 3) as tm_lia computes it.

        Parameters
        ----------
        {windows_segments, rtts_us}

        Returns
        -------
        int
            alpha * 2^16. [-]
        """
        w, r = list(map(int, windows_segments)), list(map(int, rtts_us))
        return int(self._ask(f"alpha {len(w)} {' '.join(map(str, w))} {' '.join(map(str, r))}"))

    def lia_ai_window(self, w_i: int, total: int, alpha_q16: int) -> int:
        """The window tm_lia hands to ``tcp_cong_avoid_ai``: max(ceil(total / alpha), w_i).

        Parameters
        ----------
        w_i : int
            This subflow's window. [segments]
        total : int
            Sum of the connection's windows. [segments]
        alpha_q16 : int
            alpha * 2^16. [-]

        Returns
        -------
        int
            The window whose 1/w increase per acked segment is LIA's. [segments]
        """
        return int(self._ask(f"aiw {w_i} {total} {alpha_q16}"))

    @_PARAMETERS.fill
    def olia_incr_q32(self, windows_segments: Sequence[int], rtts_us: Sequence[int],
                      ell_segments: Sequence[int], i: int) -> int:
        """OLIA's increase of subflow ``i`` per acked segment, as tm_olia computes it.

        Parameters
        ----------
        {windows_segments, rtts_us}
        ell_segments : sequence of int
            l of each subflow. [segments]
        i : int
            The subflow (slot) whose increase is asked for. [-]

        Returns
        -------
        int
            The increase * 2^32 (signed). [segments]
        """
        w, r, ell = (list(map(int, v)) for v in (windows_segments, rtts_us, ell_segments))
        return int(self._ask(f"olia {len(w)} {' '.join(map(str, w))} {' '.join(map(str, r))} "
                             f"{' '.join(map(str, ell))} {i}"))

    def olia_window(self, cwnd: int, clamp: int, acc_q32: int, incr_q32: int, acked: int) -> tuple[int, int]:
        """tm_olia's window update after an ACK in congestion avoidance (``tm_olia_window``).

        Parameters
        ----------
        cwnd : int
            The window before. [segments]
        clamp : int
            ``snd_cwnd_clamp``. [segments]
        acc_q32 : int
            The carried fraction of a segment * 2^32. [segments]
        incr_q32 : int
            The increase per acked segment * 2^32 (:meth:`olia_incr_q32`). [segments]
        acked : int
            Segments the ACK newly delivered (the kernel's ``acked``, an unsigned 32-bit count). [segments]

        Returns
        -------
        tuple of int
            The window after [segments] and the carried fraction * 2^32 [segments].
        """
        cw, acc = self._ask(f"oliawin {int(cwnd)} {int(clamp)} {int(acc_q32)} {int(incr_q32)} {int(acked)}").split()
        return int(cw), int(acc)

    def set_xtab(self, values_q16: Sequence[int]) -> None:
        """Load an x(RTT) table (as ``loader.xtab_q16`` builds it) into the harness.

        Parameters
        ----------
        values_q16 : sequence of int
            The factor at each grid point * 2^16. [-]
        """
        values = list(map(int, values_q16))
        if self._ask("xtabset " + " ".join(map(str, values))) != "ok":
            raise TestbedError("harness refused the x(RTT) table")

    def xtab(self, rtt_us: int) -> int:
        """The x(RTT) factor tm_cubic_x looks up for ``rtt_us`` (interpolated in the loaded table).

        Parameters
        ----------
        rtt_us : int
            RTT. [us]

        Returns
        -------
        int
            The factor * 2^16. [-]
        """
        return int(self._ask(f"xtab {int(rtt_us)}"))


def olia_increase_segments(windows_segments: ArrayLike, rtts_s: ArrayLike, ell_segments: ArrayLike) -> np.ndarray:
    r"""OLIA's window increase per acked segment on each path [segments] (floats).

    Parameters
    ----------
    windows_segments : array_like
        Congestion window of each subflow. [segments]
    rtts_s : array_like
        Smoothed RTT of each subflow. [s]
    ell_segments : array_like
        l_r, the larger of the data delivered between the last two losses and since the
        last loss on each subflow. [segments]

    Returns
    -------
    numpy.ndarray
        .. math:: \frac{w_r / rtt_r^2}{(\sum_p w_p / rtt_p)^2} + \frac{\alpha_r}{w_r}

        with :math:`\alpha_r = 1/(|P|\,|B \setminus M|)` on the collected paths B \ M,
        :math:`-1/(|P|\,|M|)` on M when B \ M is non-empty, 0 otherwise; M the paths of
        largest window, B the paths of largest l_r / rtt_r^2 (the square of a Reno-like rate
        estimate sqrt(l_r) / rtt_r, as the authors' Linux implementation compares them). [segments]

    References
    ----------
    .. [1] R. Khalili, N. Gast, M. Popovic, J.-Y. Le Boudec, "MPTCP is not Pareto-optimal:
       performance issues and a possible solution", IEEE/ACM ToN 21(5), 2013, Sec. IV.
    """
    w = np.asarray(windows_segments, dtype=float)
    r = np.asarray(rtts_s, dtype=float)
    ell = np.asarray(ell_segments, dtype=float)
    first = (w / r**2) / np.sum(w / r) ** 2
    in_m = w == w.max()
    rate = ell / r**2
    in_b = np.isclose(rate, rate.max(), rtol=1e-12, atol=0.0)
    collected = in_b & ~in_m
    n = len(w)
    alpha = np.zeros(n)
    if collected.any():
        alpha[collected] = 1.0 / (n * collected.sum())
        alpha[in_m] = -1.0 / (n * in_m.sum())
    return first + alpha / w

"""Proof that a P1 kernel run coupled its subflows: the BPF control's per-connection map, polled during the run."""

from __future__ import annotations

import threading

from tcpmodels.experiments.p1.config import N_CORES

__all__ = ["CcMapWatch"]


class CcMapWatch:
    """Poll a coupled control's per-connection map while a run's traffic flows (proof that it coupled).

    ``tm_lia`` and ``tm_olia`` keep one map entry per MPTCP connection (keyed by its token)
    with a slot per subflow, and drop it when the connection closes, so the map is read
    every ``interval_s`` during the run (:func:`tcpmodels.testbed.kernel_cc.dump_connections`).
    A context manager; :meth:`summary` after the block.

    Parameters
    ----------
    cc : str
        ``tm_lia`` or ``tm_olia``.
    interval_s : float
        Polling interval. [s]
    """

    def __init__(self, cc: str, interval_s: float = 2.0):
        self.cc = cc
        self.interval_s = interval_s
        self.tokens: dict[int, int] = {}  # token -> most subflows seen at once
        self.polls = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = None

    def _poll(self) -> None:
        from tcpmodels.testbed.kernel_cc import dump_connections

        try:
            for conn in dump_connections(self.cc):
                tok = int(conn["token"]) if not isinstance(conn["token"], (list, dict)) else hash(str(conn["token"]))
                self.tokens[tok] = max(self.tokens.get(tok, 0), len(conn["subflows"]))
            self.polls += 1
        except Exception as exc:  # noqa: BLE001 - a failed poll is reported, it does not stop the run
            if len(self.errors) < 3:
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._poll()

    def __enter__(self) -> "CcMapWatch":
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def summary(self) -> dict:
        """What the polls saw.

        Returns
        -------
        dict
            ``cc``, ``polls``, ``connections_seen`` (distinct tokens), ``max_subflows`` (most
            subflows of one connection in one poll), ``connections_with_4_subflows`` and ``errors``.
        """
        return {"cc": self.cc, "polls": self.polls, "connections_seen": len(self.tokens),
                "max_subflows": max(self.tokens.values(), default=0),
                "connections_with_4_subflows": sum(1 for v in self.tokens.values() if v >= N_CORES),
                "errors": self.errors}

"""What every campaign shares: its command-line errors, a testbed with a traffic server.

The records and provenance a campaign writes are :mod:`tcpmodels.records`.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

__all__ = ["ServerTestbed", "campaign_errors"]


@contextmanager
def campaign_errors(name: str, also: tuple[type[Exception], ...] = ()):
    """Turn a campaign command's expected failures into one line on stderr and an exit code.

    For the ``main()`` of every campaign module: what a user can cause or fix
    reads as a sentence, never as a traceback, and a script can tell the cases
    apart by the exit status (raised as :class:`SystemExit`).

    ====================================================  ====
    no root / no namespaces (:class:`PrivilegeError`)      77 (the "skipped" status of automake and pytest plugins)
    :class:`TestbedError`, :class:`ValueError`, ``also``   1
    Ctrl-C (the records on disk stay valid: rerun resumes) 130
    ====================================================  ====

    Parameters
    ----------
    name : str
        Prefix of the message, e.g. ``"p3"``.
    also : tuple of exception types
        Further expected failures of this command (exit status 1).
    """
    from tcpmodels.testbed import PrivilegeError, TestbedError

    try:
        yield
    except PrivilegeError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(77) from None
    except (TestbedError, ValueError, *also) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"{name}: interrupted; rerun the same command to resume", file=sys.stderr)
        raise SystemExit(130) from None


class ServerTestbed:
    """A testbed with one traffic server, kept up across the samples of a campaign; a context manager.

    Subclasses implement :meth:`topology` and set ``server_node``, ``port`` and
    ``mptcp``; :meth:`on_server_started` runs once the server is up. If the
    server does not start, the testbed is torn down before the error propagates.
    On exit the server is stopped (its records are not kept: each sample reads
    its own) and the testbed torn down.
    """

    server_node = "s"
    port = 5201
    mptcp = False
    tb = None
    server = None

    def topology(self):
        """The :class:`tcpmodels.testbed.Topology` to build."""
        raise NotImplementedError

    def on_server_started(self) -> None:
        """Hook after the server is up (e.g. a thread draining its output)."""

    def __enter__(self):
        from tcpmodels.testbed import Testbed
        from tcpmodels.testbed import workload as wl

        self.tb = Testbed(self.topology()).__enter__()
        try:
            self.server = wl.start_server(self.tb, self.server_node, port=self.port, mptcp=self.mptcp)
            self.on_server_started()
        except BaseException:
            self.tb.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.server is not None:
                self.server.stop()
        except Exception:  # noqa: BLE001 - the testbed teardown kills it anyway
            pass
        self.tb.__exit__(*exc)

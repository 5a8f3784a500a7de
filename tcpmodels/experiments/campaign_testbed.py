"""The kernel testbed of a campaign: its label in the records, and a testbed kept up with a traffic server.

:func:`kernel_testbed_of` names the testbed a kernel sample ran on from its record,
:func:`testbed_label` is a kernel campaign's ``campaign`` label on a testbed, and a :class:`ServerTestbed`
keeps a testbed and a traffic server up across the samples of a campaign.
"""

from __future__ import annotations

from tcpmodels.testbed import Topology

__all__ = ["kernel_testbed_of", "testbed_label", "ServerTestbed"]


def kernel_testbed_of(record: dict) -> str:
    """The kernel testbed a sample ran on, from what its record holds.

    Parameters
    ----------
    record : dict
        A kernel sample's record: ``delay_element_cpus`` (the pinned elements' CPUs) and ``rps_cpus``
        (the RPS mask) where the testbed had them.

    Returns
    -------
    str
        One of :data:`tcpmodels.datasets.KERNEL_TESTBEDS`: ``pinned`` if the record names pinned delay elements, else
        ``steered`` if it has an RPS mask, else ``reordering``.
    """
    if record.get("delay_element_cpus"):
        return "pinned"
    return "steered" if record.get("rps_cpus") else "reordering"


def testbed_label(campaign: str, keep_flow_order: bool, pin_delay_elements: bool = False) -> str:
    """A kernel campaign's ``campaign`` label on a testbed: the samples of two testbeds never share a key.

    Parameters
    ----------
    campaign : str
        The label on the unsteered testbed, e.g. ``"p3_kernel"``.
    keep_flow_order, pin_delay_elements : bool
        The testbed (:class:`tcpmodels.testbed.Testbed`'s options of those names).

    Returns
    -------
    str
        ``campaign``, ``campaign + "_steered"`` or ``campaign + "_pinned"``.

    Raises
    ------
    ValueError
        If ``pin_delay_elements`` is set without ``keep_flow_order``.
    """
    if pin_delay_elements and not keep_flow_order:
        raise ValueError("pin_delay_elements needs keep_flow_order; got keep_flow_order=False")
    return campaign + ("_pinned" if pin_delay_elements else "_steered" if keep_flow_order else "")


class ServerTestbed:
    """A testbed with one traffic server, kept up across the samples of a campaign; a context manager.

    Subclasses implement :meth:`topology` and set ``server_node``, ``port`` and
    ``mptcp``. If the server does not start, the testbed is torn down before the
    error propagates. The server's records are read and dropped as they come (each
    sample reads its own); on exit the server is stopped and the testbed torn down.
    """

    server_node = "s"
    port = 5201
    mptcp = False
    #: :class:`tcpmodels.testbed.Testbed`'s ``keep_flow_order`` (RPS steering against reordering)
    keep_flow_order = False
    #: :class:`tcpmodels.testbed.Testbed`'s ``pin_delay_elements`` (with ``keep_flow_order``)
    pin_delay_elements = False
    tb = None
    server = None

    def topology(self) -> Topology:
        """The :class:`tcpmodels.testbed.Topology` to build.

        Returns
        -------
        tcpmodels.testbed.Topology
            The namespaces, links and routes of the testbed; must contain ``server_node``.

        Raises
        ------
        NotImplementedError
            Always, in this base class: subclasses implement it.
        """
        raise NotImplementedError

    def __enter__(self):
        from tcpmodels.testbed import Testbed
        from tcpmodels.testbed import workload as wl

        self.tb = Testbed(self.topology(), keep_flow_order=self.keep_flow_order,
                          pin_delay_elements=self.pin_delay_elements).__enter__()
        try:
            self.server = wl.start_server(self.tb, self.server_node, port=self.port, mptcp=self.mptcp,
                                          keep_records=False)
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

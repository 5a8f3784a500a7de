"""Addressing plan of P1's k=4 fat-tree, shared by the kernel testbed and ns-3.

:func:`tcpmodels.testbed.topologies.fat_tree` (network namespaces) and
:func:`tcpmodels.sim.fattree.build_fattree` (ns-3) build the same network from
this one description, so a subflow pinned to core c crosses core c on both
engines:

- 16 hosts ``h{n}`` (n = 4 pod + 2 edge + index), edge switches ``e{p}{i}``,
  aggregation switches ``a{p}{j}``, cores ``c{j}{m}`` (core index c = 2j + m);
- host n has one address per core, "plane" c = 0..3: ``10.{16c + n}.0.1``;
- every router forwards plane-c destinations through core c with static routes
  (:func:`fat_tree_routes`); transit links are /30s in ``10.100.0.0/16``, below
  which ``10.0.0.0/10`` holds the plane addresses.

Pure Python, no I/O: the lowest layer, beside :mod:`tcpmodels.models`.
"""

from __future__ import annotations

import ipaddress

from tcpmodels._docstrings import SharedEntries

__all__ = [
    "N_HOSTS",
    "N_CORES",
    "TRANSIT_PREFIX",
    "check_host",
    "check_plane",
    "host_name",
    "core_name",
    "plane_address",
    "plane_of_address",
    "host_of_address",
    "fat_tree_links",
    "fat_tree_link_name",
    "fat_tree_routes",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    n : int
        Host index, 0..15. [-]
""")

#: Hosts of the k=4 fat-tree. [-]
N_HOSTS = 16
#: Core switches, one per address plane. [-]
N_CORES = 4
#: Where the point-to-point transit links between switches (and to hosts) get their /30s.
TRANSIT_PREFIX = "10.100.0.0/16"


def check_host(n: int) -> None:
    """Raise ``ValueError`` unless ``n`` is a host index 0..15.

    Parameters
    ----------
    n : int
        Host index (``bool`` is refused). [-]

    Raises
    ------
    ValueError
        If ``n`` is not an integer in [0, 15].
    """
    if not isinstance(n, int) or isinstance(n, bool) or not (0 <= n < N_HOSTS):
        raise ValueError(f"host [index] must be an integer in [0, {N_HOSTS - 1}]; got {n!r}")


def check_plane(c: int) -> None:
    """Raise ``ValueError`` unless ``c`` is a plane (core) index 0..3.

    Parameters
    ----------
    c : int
        Plane, i.e. core index (``bool`` is refused). [-]

    Raises
    ------
    ValueError
        If ``c`` is not an integer in [0, 3].
    """
    if not isinstance(c, int) or isinstance(c, bool) or not (0 <= c < N_CORES):
        raise ValueError(f"plane [core index] must be an integer in [0, {N_CORES - 1}]; got {c!r}")


@_PARAMETERS.fill
def host_name(n: int) -> str:
    """Testbed name of host n: ``"h{n}"``.

    Parameters
    ----------
    {n}

    Returns
    -------
    str
        The node name, e.g. ``"h5"``.

    Raises
    ------
    ValueError
        If ``n`` is not a host index.
    """
    check_host(n)
    return f"h{n}"


def core_name(c: int) -> str:
    """Testbed name of core c: ``"c{j}{m}"`` with c = 2j + m.

    Parameters
    ----------
    c : int
        Core (plane) index, 0..3. [-]

    Returns
    -------
    str
        The node name, e.g. ``"c10"`` for c = 2.

    Raises
    ------
    ValueError
        If ``c`` is not a plane index.
    """
    check_plane(c)
    return f"c{c // 2}{c % 2}"


@_PARAMETERS.fill
def plane_address(n: int, c: int) -> str:
    """Host n's address on plane c: ``10.{16c + n}.0.1`` (as in the kernel testbed).

    Parameters
    ----------
    {n}
    c : int
        Plane (core) index, 0..3. [-]

    Returns
    -------
    str
        The dotted IPv4 address.

    Raises
    ------
    ValueError
        If ``n`` or ``c`` is out of range.
    """
    check_host(n)
    check_plane(c)
    return f"10.{16 * c + n}.0.1"


def plane_of_address(addr: str) -> int:
    """Plane (core) of a host address ``10.{16c + n}.0.1``; -1 for any other address.

    Parameters
    ----------
    addr : str
        A dotted IPv4 address (anything ``str()`` turns into one).

    Returns
    -------
    int
        The plane c in 0..3, or -1 if ``addr`` is not a host plane address.

    Raises
    ------
    ValueError
        If ``addr`` is not an IPv4 address at all (from :mod:`ipaddress`).
    """
    ip = ipaddress.IPv4Address(str(addr)).packed
    if ip[0] != 10 or ip[2] != 0 or ip[3] != 1 or ip[1] >= 16 * N_CORES:
        return -1
    return ip[1] // 16


def host_of_address(addr: str) -> int:
    """Host index of a host address ``10.{16c + n}.0.1``; -1 for any other address.

    Parameters
    ----------
    addr : str
        A dotted IPv4 address.

    Returns
    -------
    int
        The host index n in 0..15, or -1 if ``addr`` is not a host plane address.

    Raises
    ------
    ValueError
        If ``addr`` is not an IPv4 address at all (from :mod:`ipaddress`).
    """
    if plane_of_address(addr) < 0:
        return -1
    return ipaddress.IPv4Address(str(addr)).packed[1] % 16


def fat_tree_links() -> list[tuple[str, str, str]]:
    """The 48 links as ``(lower node, upper node, tier)``, tier the :class:`FatTree` field of its :class:`Link`.

    Same order and node names as :func:`tcpmodels.testbed.topologies.fat_tree`
    (host links ``h{n}``-``e{p}{i}``, then edge-aggregation, per pod, then
    aggregation-core).

    Returns
    -------
    list of tuple of (str, str, str)
        48 ``(lower, upper, tier)`` triples, ``tier`` one of ``"host_link"``,
        ``"edge_agg_link"``, ``"agg_core_link"``.
    """
    out = []
    for p in range(4):
        for i in range(2):
            for h in range(2):
                out.append((f"h{4 * p + 2 * i + h}", f"e{p}{i}", "host_link"))
            for j in range(2):
                out.append((f"e{p}{i}", f"a{p}{j}", "edge_agg_link"))
        for j in range(2):
            for m in range(2):
                out.append((f"a{p}{j}", core_name(2 * j + m), "agg_core_link"))
    return out


def fat_tree_routes() -> list[tuple[str, str, str]]:
    """Every static route as ``(node, destination prefix, next-hop node)``: the testbed's plan.

    Hosts: ``10.{16c}.0.0/12`` via their edge (one per plane). Edge ``e{p}{i}``:
    ``10.{16c + n}.0.0/16`` to each of its hosts n, ``10.{16c}.0.0/12`` up to
    ``a{p}{c // 2}``. Aggregation ``a{p}{j}`` (c = 2j + m): ``10.{16c + 4p + 2i}.0.0/15``
    down to ``e{p}{i}``, ``10.{16c}.0.0/12`` up to core c. Core c:
    ``10.{16c + 4p}.0.0/14`` to ``a{p}{c // 2}``.

    Returns
    -------
    list of tuple of (str, str, str)
        ``(node, destination prefix in CIDR notation, next-hop node)`` for every router and host.
    """
    out = []
    for p in range(4):
        for i in range(2):
            edge = f"e{p}{i}"
            for h in range(2):
                n = 4 * p + 2 * i + h
                for c in range(N_CORES):
                    out.append((f"h{n}", f"10.{16 * c}.0.0/12", edge))
                    out.append((edge, f"10.{16 * c + n}.0.0/16", f"h{n}"))
            for c in range(N_CORES):
                out.append((edge, f"10.{16 * c}.0.0/12", f"a{p}{c // 2}"))
                out.append((f"a{p}{c // 2}", f"10.{16 * c + 4 * p + 2 * i}.0.0/15", edge))
        for c in range(N_CORES):
            out.append((f"a{p}{c // 2}", f"10.{16 * c}.0.0/12", core_name(c)))
            out.append((core_name(c), f"10.{16 * c + 4 * p}.0.0/14", f"a{p}{c // 2}"))
    return out


def fat_tree_link_name(lower: str, upper: str) -> str:
    """The testbed's name of the link between ``lower`` and ``upper`` (an entry of :func:`fat_tree_links`).

    ``hl{n}`` (host n to its edge), ``ea{p}{i}{j}`` (edge ``e{p}{i}`` to ``a{p}{j}``),
    ``ac{p}{j}{m}`` (aggregation ``a{p}{j}`` to core ``c{j}{m}``).

    Parameters
    ----------
    lower : str
        The lower node of the link (host ``h{n}``, edge ``e{p}{i}`` or aggregation ``a{p}{j}``).
    upper : str
        The upper node (edge, aggregation or core); only its last two characters are used.

    Returns
    -------
    str
        The link name.

    Raises
    ------
    ValueError
        If ``lower`` is not a host, edge or aggregation switch name.
    """
    if lower.startswith("h"):
        return f"hl{lower[1:]}"
    if lower.startswith("e"):
        return f"ea{lower[1:]}{upper[2:]}"
    if lower.startswith("a"):
        return f"ac{lower[1:]}{upper[2:]}"
    raise ValueError(f"lower must be a host, edge or aggregation switch name; got {lower!r}")

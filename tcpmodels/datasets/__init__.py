"""Each dataset's schema, in one place below the campaigns that write it and the papers that read it.

One module per dataset (:mod:`~tcpmodels.datasets.p1` ... :mod:`~tcpmodels.datasets.p5`,
:mod:`~tcpmodels.datasets.p5_testbed`, :mod:`~tcpmodels.datasets.sim_vs_kernel`, :mod:`~tcpmodels.datasets.limits`,
:mod:`~tcpmodels.datasets.fit`, :mod:`~tcpmodels.datasets.kernel_coupled_cc` and its ``_ns3`` part,
:mod:`~tcpmodels.datasets.bbr`, and the datasets of issue 57's campaigns: :mod:`~tcpmodels.datasets.p1_abab` (and its second session
:mod:`~tcpmodels.datasets.p1_abab_idle`),
:mod:`~tcpmodels.datasets.p1_ns3_windows`, :mod:`~tcpmodels.datasets.p1_swaps`, :mod:`~tcpmodels.datasets.p1_placement`, :mod:`~tcpmodels.datasets.p1_delack`,
:mod:`~tcpmodels.datasets.p2_sndbuf`,
:mod:`~tcpmodels.datasets.p2_spread_pilot`, :mod:`~tcpmodels.datasets.p2_lossy`, :mod:`~tcpmodels.datasets.p3_windows`) holds its
``SCHEMA`` (:class:`~tcpmodels.datasets.schema.DatasetSchema`: tables, columns with dtype and unit, version), the
constants both sides need (P3's ``REPEAT_SUFFIX``, ``TESTBEDS``, ``LEGACY_NS3_RATE_BPS``...) and the migrations of
its older versions. :func:`~tcpmodels.datasets.writer.write_dataset` is the one writer (tables checked, then
Parquet, CSV and the provenance JSON); papers read through
:meth:`~tcpmodels.datasets.schema.DatasetSchema.read`.
"""

from tcpmodels.datasets.schema import KERNEL_TESTBEDS, Column, DatasetSchema, SchemaError, Table, columns, unit_of
from tcpmodels.datasets.writer import REPO_ROOT, write_dataset, write_provenance, write_tables

__all__ = ["Column", "DatasetSchema", "SchemaError", "Table", "columns", "unit_of", "write_dataset",
           "write_tables", "write_provenance", "REPO_ROOT", "SCHEMAS", "NOT_YET_SHIPPED", "KERNEL_TESTBEDS"]

#: the module of each dataset, by its prefix
SCHEMAS = ("p1", "p2", "p3", "p4", "p5", "p5_testbed", "sim_vs_kernel", "limits", "fit", "kernel_coupled_cc",
           "kernel_coupled_cc_ns3", "bbr", "p1_abab", "p1_abab_idle", "p1_ns3_windows", "p1_swaps", "p1_placement", "p1_delack", "p2_sndbuf", "p2_spread_pilot", "p2_lossy",
           "p3_windows")
#: the datasets of :data:`SCHEMAS` whose campaigns have not shipped them yet (issue 57's, running)
NOT_YET_SHIPPED: tuple[str, ...] = ()

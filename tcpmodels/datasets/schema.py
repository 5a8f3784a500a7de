"""What a dataset is: its tables, their columns with dtype and unit, a schema version, and the checks of a frame.

Every campaign's dataset (``data/datasets/<prefix>_<table>.parquet`` and ``<prefix>_provenance.json``) is
described once, by a :class:`DatasetSchema` in this package (``tcpmodels.datasets.p3.SCHEMA`` and so on): the
campaign builders in ``tcpmodels.experiments`` write through :func:`tcpmodels.datasets.writer.write_dataset`,
which validates each table against it, and the paper modules in ``tcpmodels.papers`` read through
:meth:`DatasetSchema.read` and the migrations of their dataset module (older versions of a table brought to
the current one, in one place). Neither side copies the other's constants: they are here, below both.

A column's unit follows from its name (the project's rule: ``rtt_s``, ``rate_bps``, ``size_bytes``; see
:func:`unit_of`); a column whose name carries no unit is a label, a count or a dimensionless ratio (``-``).

Dtypes are those of the shipped Parquet files (``int64``, ``int32``, ``int8``, ``float64``, ``float32``,
``str``, ``bool``). :meth:`Table.check` compares kinds, not widths: a number is a number (pandas turns an
integer column with a missing value into floats, and a builder's small run may hold whole numbers in a
float column), a string a string, a flag a flag; a column of nothing but missing values fits any dtype.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["Column", "Table", "DatasetSchema", "UNITS", "DTYPES", "unit_of", "columns", "SchemaError",
           "KERNEL_TESTBEDS"]

#: the kernel testbeds a sample can have run on (several campaigns' tables have a ``testbed`` column):
#: ``reordering`` (no RPS steering; every sample before 2026-11-28), ``steered`` (RPS steering on every veth,
#: in order, but a delay element's bursts overflowed other CPUs' backlogs at 400 Mbit/s) and ``pinned``
#: (steered, each delay element pinned to a CPU and its frames processed there)
KERNEL_TESTBEDS = ("reordering", "steered", "pinned")

#: The unit a column name's last ``_``-separated word stands for.
UNITS = {
    "s": "s", "ms": "ms", "us": "µs", "ns": "ns", "bps": "bit/s", "mbps": "Mbit/s", "bytes": "bytes",
    "segments": "segments", "segs": "segments", "packets": "packets", "utc": "UTC time, ISO 8601",
}
#: The dtypes a column may declare, and the kind each belongs to.
DTYPES = {"int64": "number", "int32": "number", "int8": "number", "float64": "number", "float32": "number",
          "str": "str", "bool": "bool"}


class SchemaError(ValueError):
    """A table does not have the columns or dtypes its schema declares (the message names table and column)."""


def unit_of(name: str) -> str:
    """The unit a column name carries, from its last word (:data:`UNITS`); ``-`` for none.

    Parameters
    ----------
    name : str
        Column name, e.g. ``"reno_rtt_ms"``.

    Returns
    -------
    str
        ``"ms"`` for ``reno_rtt_ms``, ``"bit/s"`` for ``rate_bps``, ``"-"`` for ``jain``.

    Examples
    --------
    >>> unit_of("reno_rtt_ms"), unit_of("rate_bps"), unit_of("jain")
    ('ms', 'bit/s', '-')
    """
    return UNITS.get(name.rsplit("_", 1)[-1], "-") if "_" in name else "-"


@dataclass(frozen=True)
class Column:
    """One column of a table.

    Parameters
    ----------
    name : str
        The column's name.
    dtype : str
        One of :data:`DTYPES`.
    unit : str
        Its unit (default from the name, :func:`unit_of`).
    """

    name: str
    dtype: str
    unit: str = ""

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"column {self.name!r}: dtype must be one of {sorted(DTYPES)}; got {self.dtype!r}")
        if not self.unit:
            object.__setattr__(self, "unit", unit_of(self.name))


def columns(spec: str) -> tuple[Column, ...]:
    """Columns from a block of ``name dtype [unit]`` lines (blank lines and ``#`` comments skipped).

    Parameters
    ----------
    spec : str
        One column a line: its name, its dtype (:data:`DTYPES`) and, where the name does not say it, its unit.

    Returns
    -------
    tuple of Column

    Examples
    --------
    >>> [(c.name, c.dtype, c.unit) for c in columns('''
    ...     rtt_ms   float64
    ...     share    float64  fraction of the link
    ... ''')]
    [('rtt_ms', 'float64', 'ms'), ('share', 'float64', 'fraction of the link')]
    """
    out = []
    for line in spec.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, dtype, *unit = line.split(None, 2)
            out.append(Column(name, dtype, unit[0] if unit else ""))
    return tuple(out)


def _kind(series: pd.Series) -> str | None:
    """``number``, ``str``, ``bool``, ``other``, or None for a column of missing values only."""
    if series.isna().all():
        return None
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_numeric_dtype(series):
        return "number"
    if pd.api.types.is_string_dtype(series) or series.dtype == object:
        values = series.dropna()
        if values.map(lambda v: isinstance(v, str)).all():
            return "str"
        if values.map(lambda v: isinstance(v, bool)).all():
            return "bool"
    return "other"


@dataclass(frozen=True, kw_only=True)
class Table:
    """One table of a dataset: ``<prefix>_<name>.parquet`` (and a ``.csv`` copy where ``csv`` is set).

    Parameters
    ----------
    name : str
        The table's name within its dataset (``kernel``); the file adds the dataset's prefix.
    columns : tuple of Column
        Every column of the current version (their order is not checked).
    optional : tuple of str
        Columns a current table may lack (present only when some run had them).
    compression : str
        Parquet compression the builder writes with.
    compression_level : int or None
        Its level (None: the library's default).
    csv_float_format : str or None
        ``float_format`` of the ``.csv`` copy.
    csv : bool
        Whether a ``.csv`` copy is written beside the Parquet file.
    """

    name: str
    columns: tuple[Column, ...]
    optional: tuple[str, ...] = ()
    compression: str = "zstd"
    compression_level: int | None = None
    csv: bool = False
    csv_float_format: str | None = None

    @property
    def column_names(self) -> tuple[str, ...]:
        """The names of :attr:`columns`, in order."""
        return tuple(c.name for c in self.columns)

    def check(self, frame: pd.DataFrame, *, where: str = "", complete: bool = True) -> None:
        """Raise :class:`SchemaError` unless ``frame`` has the declared columns, of the declared kinds, and no other.

        Columns listed in :attr:`optional` may be absent; an empty frame may lack any column, never hold
        an undeclared one.

        Parameters
        ----------
        frame : pandas.DataFrame
            The table.
        where : str
            What to name in the message (a file); default the table's name.
        complete : bool
            Whether every declared column must be there. The writer passes False: a build may lack a column
            that only some runs produce (fit's ``queue_drops``, P3's ``cpu_*`` before records had CPU times),
            which the readers' migrations fill; an undeclared column or one of another kind is always an error.

        Raises
        ------
        SchemaError
            Naming the missing and the undeclared columns, or each column of another kind than declared.
        """
        label = where or f"table {self.name!r}"
        declared = {c.name: c for c in self.columns}
        # an empty table (a build with no rows of it) may lack columns: there is nothing to type
        missing = [] if frame.empty or not complete else [c for c in declared
                                                          if c not in frame.columns and c not in self.optional]
        extra = [c for c in frame.columns if c not in declared]
        if missing or extra:
            raise SchemaError(f"{label}: columns missing {missing}, not in the schema {extra} "
                              f"(the schema: tcpmodels.datasets; a new column is declared there)")
        wrong = []
        for name in (c for c in frame.columns if c in declared):
            kind = _kind(frame[name])
            want = DTYPES[declared[name].dtype]
            if kind is not None and kind != want:
                wrong.append(f"{name} holds {kind} ({frame[name].dtype}), declared {declared[name].dtype}")
        if wrong:
            raise SchemaError(f"{label}: " + "; ".join(wrong))


@dataclass(frozen=True, kw_only=True)
class DatasetSchema:
    """A dataset: its prefix, schema version, tables and the command that writes it.

    Parameters
    ----------
    prefix : str
        File prefix (``p3`` for ``p3_kernel.parquet``, ``p3_provenance.json``).
    version : int
        The schema version the builder writes today (records of a campaign carry it as ``schema``).
    tables : tuple of Table
        Its tables.
    command : str
        The command that writes it, named when a file is missing.
    provenance : str
        The provenance file's name (default ``<prefix>_provenance.json``).
    """

    prefix: str
    version: int
    tables: tuple[Table, ...]
    command: str
    provenance: str = ""

    def table(self, name: str) -> Table:
        """The table called ``name``.

        Parameters
        ----------
        name : str

        Returns
        -------
        Table

        Raises
        ------
        KeyError
            Naming the dataset's tables.
        """
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"dataset {self.prefix!r} has no table {name!r}; it has {[t.name for t in self.tables]}")

    def file_name(self, name: str) -> str:
        """The Parquet file of table ``name``.

        Parameters
        ----------
        name : str
            The table's name (``""`` for a dataset of one table named by its prefix alone).

        Returns
        -------
        str
            ``<prefix>_<name>.parquet``, or ``<prefix>.parquet`` for ``""``.
        """
        return f"{self.prefix}_{name}.parquet" if name else f"{self.prefix}.parquet"

    @property
    def provenance_name(self) -> str:
        """The provenance file's name: :attr:`provenance`, else ``<prefix>_provenance.json``."""
        return self.provenance or f"{self.prefix}_provenance.json"

    def validate(self, frames: Mapping[str, pd.DataFrame], *, complete: bool = True) -> None:
        """Check each frame against its table (:meth:`Table.check`).

        Parameters
        ----------
        frames : mapping of str to DataFrame
            Table name to table; names not in the schema are an error.
        complete : bool
            Whether every declared (not optional) column must be there (:meth:`Table.check`).

        Raises
        ------
        SchemaError
            For the first table that does not match, or a name the schema does not know.
        """
        for name, frame in frames.items():
            self.table(name).check(frame, where=self.file_name(name), complete=complete)

    def folder(self, data_dir: str | Path, first: str) -> Path:
        """The folder holding the files: ``data_dir`` itself, or its ``datasets/`` (the project's ``data``).

        Parameters
        ----------
        data_dir : str or Path
            The project's ``data`` directory or the ``datasets`` directory itself.
        first : str
            A table whose file decides: ``data_dir`` when it holds that file or has no ``datasets/``.

        Returns
        -------
        Path
        """
        d = Path(data_dir)
        if not (d / self.file_name(first)).exists() and (d / "datasets").is_dir():
            d = d / "datasets"
        return d

    def present(self, data_dir: str | Path, names: Sequence[str]) -> bool:
        """Whether the tables ``names`` are all there (a campaign's dataset may not be shipped yet).

        Parameters
        ----------
        data_dir, names : str or Path, sequence of str
            Where and which, as :meth:`read` takes them.

        Returns
        -------
        bool
            True when :meth:`read` finds every one of them.
        """
        d = self.folder(data_dir, names[0])
        return all((d / self.file_name(n)).exists() for n in names)

    def read(self, data_dir: str | Path, names: Sequence[str], *, optional: Sequence[str] = (),
             command: str | None = None) -> dict[str, object]:
        """Read the tables ``names`` (and ``optional`` where present) and the provenance, as shipped.

        Old versions are read as they are: the dataset's module migrates them (``tcpmodels.datasets.p3``...).

        Parameters
        ----------
        data_dir : str or Path
            The project's ``data`` directory (``datasets/`` below it), or the ``datasets`` directory itself.
        names : sequence of str
            Required tables.
        optional : sequence of str
            Tables read when present (absent ones are left out of the result).
        command : str, optional
            The command named when a file is missing (default :attr:`command`).

        Returns
        -------
        dict
            ``{name: DataFrame}`` plus ``"provenance"`` (``{}`` when there is no JSON file).

        Raises
        ------
        FileNotFoundError
            Naming the first missing file and the command that writes it.
        """
        d = self.folder(data_dir, names[0])
        out: dict[str, object] = {}
        for name in names:
            path = d / self.file_name(name)
            if not path.exists():
                raise FileNotFoundError(f"{path} is missing; write it with `{command or self.command}`")
            out[name] = pd.read_parquet(path)
        for name in optional:
            path = d / self.file_name(name)
            if path.exists():
                out[name] = pd.read_parquet(path)
        prov = d / self.provenance_name
        out["provenance"] = json.loads(prov.read_text()) if prov.exists() else {}
        return out


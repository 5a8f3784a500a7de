"""The one writer of datasets: tables checked against their schema, Parquet (+ CSV) and the provenance JSON.

Every campaign builder writes through :func:`write_tables` and :func:`write_provenance` (:func:`write_dataset`
does both): the tables are validated (:meth:`~tcpmodels.datasets.schema.DatasetSchema.validate`: no undeclared
column, none of another kind) before any file is touched and written with the compression the schema gives
them; the provenance gets what every dataset's provenance holds: the schema version (``schema_version``), when it was written (``written_utc``, kept if the builder set
it) and the host's load then (``load_avg_at_write``, likewise). The git state is the builder's to take
*before* it writes anything (:func:`tcpmodels.records.shipped_git_state`), and it passes it in ``provenance``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd

from tcpmodels.datasets.schema import DatasetSchema

__all__ = ["write_dataset", "write_tables", "write_provenance", "REPO_ROOT"]

#: The repository (or source tree) the package runs from: the parent of the ``tcpmodels`` package. Where
#: campaigns find ``data/datasets`` and ``runs/``, and whose git state a shipped dataset records.
REPO_ROOT = Path(__file__).resolve().parents[2]


def write_tables(schema: DatasetSchema, out_dir: str | Path, frames: Mapping[str, pd.DataFrame]) -> list[str]:
    """Validate ``frames`` against ``schema``, then write each as Parquet (and CSV where the table says so).

    Parameters
    ----------
    schema : DatasetSchema
        The dataset's schema.
    out_dir : str or Path
        The folder (created if missing).
    frames : mapping of str to DataFrame
        Table name to table (a subset of the schema's tables: a builder may rewrite only some).

    Returns
    -------
    list of str
        The file names written, in order.

    Raises
    ------
    tcpmodels.datasets.schema.SchemaError
        Before anything is written, if a table does not match its schema.
    """
    schema.validate(frames, complete=False)  # a build may lack a column only some runs produce
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in frames.items():
        table = schema.table(name)
        kw = {} if table.compression_level is None else {"compression_level": table.compression_level}
        path = out / schema.file_name(name)
        frame.to_parquet(path, index=False, compression=table.compression, **kw)
        written.append(path.name)
        if table.csv:
            csv = path.with_suffix(".csv")
            frame.to_csv(csv, index=False, float_format=table.csv_float_format)
            written.append(csv.name)
    return written


def write_provenance(schema: DatasetSchema, out_dir: str | Path, provenance: dict, *,
                     default: Callable[[object], object] | None = str) -> Path:
    """Write ``<prefix>_provenance.json`` with the facts every dataset's provenance holds.

    Parameters
    ----------
    schema : DatasetSchema
        The dataset's schema (its version and file name).
    out_dir : str or Path
        The folder.
    provenance : dict
        What the builder records (config, git state, counts, times); changed in place: ``schema_version``,
        and ``written_utc`` and ``load_avg_at_write`` where the builder did not set them.
    default : callable or None
        ``json.dumps``'s ``default`` for values JSON does not know (default ``str``).

    Returns
    -------
    Path
        The file written.
    """
    from tcpmodels.records import load_average, utc_now

    provenance.setdefault("written_utc", utc_now())
    provenance.setdefault("load_avg_at_write", load_average())
    provenance["schema_version"] = schema.version
    path = Path(out_dir) / schema.provenance_name
    path.write_text(json.dumps(provenance, indent=1, default=default) + "\n")
    return path


def write_dataset(schema: DatasetSchema, out_dir: str | Path, frames: Mapping[str, pd.DataFrame],
                  provenance: dict, *, default: Callable[[object], object] | None = str) -> list[str]:
    """:func:`write_tables`, then :func:`write_provenance` (whose ``files`` lists what was written, if unset).

    Parameters
    ----------
    schema, out_dir, frames
        As :func:`write_tables` takes them.
    provenance, default
        As :func:`write_provenance` takes them.

    Returns
    -------
    list of str
        The files written, the provenance last.

    Raises
    ------
    tcpmodels.datasets.schema.SchemaError
        Before anything is written, if a table does not match its schema.
    """
    files = write_tables(schema, out_dir, frames)
    provenance.setdefault("files", files)
    return [*files, write_provenance(schema, out_dir, provenance, default=default).name]

"""Each dataset's schema (tcpmodels.datasets) describes the shipped files, catches a table that drifts from it,
and its one writer writes what the builders wrote before (same files, same Parquet content)."""

import importlib
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tcpmodels.datasets import NOT_YET_SHIPPED, SCHEMAS, SchemaError, write_dataset
from tcpmodels.datasets import p1 as p1_schema
from tcpmodels.datasets import p3 as p3_schema
from tcpmodels.datasets.writer import REPO_ROOT

DATASETS = REPO_ROOT / "data" / "datasets"


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_shipped_table_matches_its_schema(name):
    schema = importlib.import_module(f"tcpmodels.datasets.{name}").SCHEMA
    for table in schema.tables:
        path = DATASETS / schema.file_name(table.name)
        if (name == "p2" and table.name == "fig4" or name in NOT_YET_SHIPPED) and not path.exists():
            continue
        assert path.exists(), f"{path} is in the schema but not shipped"
        table.check(pd.read_parquet(path), where=path.name)
        if table.csv:
            assert path.with_suffix(".csv").exists()


def test_every_shipped_parquet_file_has_a_schema():
    named = {importlib.import_module(f"tcpmodels.datasets.{n}").SCHEMA.file_name(t.name)
             for n in SCHEMAS for t in importlib.import_module(f"tcpmodels.datasets.{n}").SCHEMA.tables}
    shipped = {p.name for p in DATASETS.glob("*.parquet")}
    assert not shipped - named, sorted(shipped - named)


def test_a_drifted_table_is_named_with_what_differs(tmp_path):
    k = pd.read_parquet(DATASETS / "p3_kernel.parquet")
    with pytest.raises(SchemaError, match=r"p3_kernel.parquet: columns missing \['jain'\], not in the schema "
                                          r"\['jain_index'\]"):
        p3_schema.SCHEMA.validate({"kernel": k.rename(columns={"jain": "jain_index"})})
    with pytest.raises(SchemaError, match="reno_rtt_ms holds str"):
        p3_schema.SCHEMA.validate({"kernel": k.assign(reno_rtt_ms="1 ms")})
    # a build may lack a declared column (one only some runs produce): the writer's check lets it pass
    p3_schema.SCHEMA.validate({"kernel": k.drop(columns=["jain"])}, complete=False)
    with pytest.raises(SchemaError, match=r"not in the schema \['jain_index'\]"):
        p3_schema.SCHEMA.validate({"kernel": k.rename(columns={"jain": "jain_index"})}, complete=False)
    with pytest.raises(SchemaError, match="jain holds str"):
        write_dataset(p3_schema.SCHEMA, tmp_path, {"kernel": k.assign(jain="high")}, {})
    assert not list(tmp_path.iterdir())  # nothing written
    # an integer column with a missing value is stored as floats by pandas: still a number
    p3_schema.SCHEMA.validate({"kernel": k.assign(rep=k["rep"].where(k.index > 0))})
    with pytest.raises(KeyError, match="dataset 'p3' has no table 'kernels'"):
        p3_schema.SCHEMA.validate({"kernels": k})


def test_writer_writes_what_the_builders_wrote(tmp_path):
    # the p3 kernel table, written by the writer and as the builder wrote it before (zstd Parquet, %.6g CSV)
    k = pd.read_parquet(DATASETS / "p3_kernel.parquet")
    prov = {"dataset": "p3"}
    files = write_dataset(p3_schema.SCHEMA, tmp_path / "new", {"kernel": k}, prov)
    assert files == ["p3_kernel.parquet", "p3_kernel.csv", "p3_provenance.json"]
    old = tmp_path / "old"
    old.mkdir()
    k.to_parquet(old / "p3_kernel.parquet", index=False, compression="zstd")
    k.to_csv(old / "p3_kernel.csv", index=False, float_format="%.6g")
    assert pq.read_table(tmp_path / "new" / "p3_kernel.parquet").equals(pq.read_table(old / "p3_kernel.parquet"))
    assert (tmp_path / "new" / "p3_kernel.csv").read_bytes() == (old / "p3_kernel.csv").read_bytes()
    stored = json.loads((tmp_path / "new" / "p3_provenance.json").read_text())
    assert stored["schema_version"] == p3_schema.SCHEMA.version and stored["files"] == files[:2]
    assert "written_utc" in stored and len(stored["load_avg_at_write"]) == 3


def test_p3_migrations_fill_an_old_table_as_documented():
    old = pd.DataFrame({"reno_rtt_ms": [1.0, 4.0], "rate_bps": [np.nan, 5e8]})
    config = {"rate_bps": 4e8, "measure_s": 30.0, "buffer_bytes": 1000}
    filled = p3_schema.kernel_filled(old, config, ("kind", "rate_bps", "measure_s", "testbed", "cubic_cc_reading"))
    assert filled["kind"].tolist() == ["standard"] * 2 and filled["testbed"].tolist() == ["reordering"] * 2
    assert filled["rate_bps"].tolist() == [4e8, 5e8] and filled["measure_s"].tolist() == [30.0, 30.0]
    assert filled["cubic_cc_reading"].isna().all()
    plan, repeats = p3_schema.split_repeats(pd.DataFrame({"campaign": ["p3_kernel", "p3_kernel_repeat", None]}))
    assert plan["campaign"].fillna("").tolist() == ["p3_kernel", ""] and repeats["campaign"].tolist() == ["p3_kernel_repeat"]
    ns3 = p3_schema.ns3_filled(pd.DataFrame({"seed": [0]}), {})
    assert ns3["rate_bps"].tolist() == [p3_schema.LEGACY_NS3_RATE_BPS] and ns3["duration_s"].isna().all()
    fluid = pd.DataFrame({"reno_bps": [30e6], "cubic_bps": [10e6], "utilization": [0.4]})
    assert p3_schema.fluid_rate_bps(fluid, {}).tolist() == [100e6]


def test_p1_schema1_tables_get_their_engines_control():
    old = pd.DataFrame({"engine": ["kernel", "kernel_steered", "ns3"], "seed": [0, 0, 0]})
    assert p1_schema.with_cc(old)["cc"].tolist() == ["uncoupled", "uncoupled", "lia"]
    assert p1_schema.with_cc(old.assign(cc="tm_lia"))["cc"].tolist() == ["tm_lia"] * 3


def test_read_accepts_data_or_datasets_dir_and_names_the_command(tmp_path):
    from tcpmodels.datasets import DatasetSchema, Table, columns

    schema = DatasetSchema(prefix="px", version=1, command="make px",
                           tables=(Table(name="runs", columns=columns("a int64")),
                                   Table(name="bins", columns=columns("b int64"))))
    d = tmp_path / "datasets"
    d.mkdir()
    pd.DataFrame({"a": [1, 2]}).to_parquet(d / "px_runs.parquet")
    (d / "px_provenance.json").write_text(json.dumps({"k": 1}))
    for where in (tmp_path, d):
        got = schema.read(where, ("runs",), optional=("extra",))
        assert got["runs"]["a"].tolist() == [1, 2] and got["provenance"] == {"k": 1} and "extra" not in got
    with pytest.raises(FileNotFoundError, match="px_bins.parquet is missing; write it with `make px`"):
        schema.read(tmp_path, ("runs", "bins"))

"""Audit round 2 (issue 28): a key generator is Apache Hudi's by its full class name (KeyGeneratorType), not by
a simple name that looks like one: ``com.acme.SimpleKeyGenerator`` builds keys of its own, so hudi-py refuses to
create or write such a table, naming the class, and still reads it."""

from __future__ import annotations

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import ConfigError, HudiTable, UnsupportedTableError
from hudi_ds.config.table_config import key_generator_type_name

KG = "org.apache.hudi.keygen."
SQL = "org.apache.spark.sql.hudi.command."


@pytest.mark.parametrize("name,kind", [
    (KG + "SimpleKeyGenerator", "SIMPLE"), (KG + "SimpleAvroKeyGenerator", "SIMPLE"),
    (KG + "ComplexKeyGenerator", "COMPLEX"), (KG + "NonpartitionedAvroKeyGenerator", "NON_PARTITION"),
    (KG + "TimestampBasedKeyGenerator", "TIMESTAMP"), (KG + "CustomAvroKeyGenerator", "CUSTOM"),
    (KG + "GlobalDeleteKeyGenerator", "GLOBAL_DELETE"), (KG + "AutoRecordGenWrapperKeyGenerator", "AUTO_RECORD"),
    (SQL + "SqlKeyGenerator", "SPARK_SQL"), (SQL + "UuidKeyGenerator", "SPARK_SQL_UUID"),
    ("SIMPLE", "SIMPLE"), ("non_partition", "NON_PARTITION"), ("TIMESTAMP_AVRO", "TIMESTAMP"),
    ("USER_PROVIDED", "USER_PROVIDED"),
    # not Hudi's: KeyGeneratorType.fromClassName matches whole class names only
    ("com.acme.SimpleKeyGenerator", "USER_PROVIDED"), ("SimpleKeyGenerator", "USER_PROVIDED"),
    (KG + "custom.SimpleKeyGenerator", "USER_PROVIDED"), ("org.apache.hudi.SimpleKeyGenerator", "USER_PROVIDED"),
])
def test_the_type_of_a_key_generator_is_hudis_by_its_full_name(name, kind):
    assert key_generator_type_name(name) == kind


@pytest.mark.parametrize("name", ["com.acme.SimpleKeyGenerator", "my.TimestampBasedKeyGenerator", "ComplexKeyGenerator",
                                  KG + "CustomKeyGenerator", SQL + "SqlKeyGenerator"])
def test_a_table_is_not_created_with_a_key_generator_not_hudis(tmp_path, name):
    with pytest.raises(ConfigError, match=name):
        HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", options={"hoodie.datasource.write.keygenerator.class": name})


@pytest.mark.parametrize("name", [KG + "ComplexKeyGenerator", "COMPLEX", KG + "ComplexAvroKeyGenerator"])
def test_hudis_own_names_create_the_table(tmp_path, name):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         options={"hoodie.datasource.write.keygenerator.class": name})
    t.write(pa.table({"id": ["a"], "ts": [1], "dt": ["x"]}))
    assert rows(hudi_rs(str(tmp_path / "t")), ["id", "dt"]) == [("a", "x")]


@pytest.mark.parametrize("version", [6, 9])
def test_a_table_with_a_user_key_generator_is_read_not_written(tmp_path, version):
    base = str(tmp_path / "t")
    t = HudiTable.create(base, table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         options={"hoodie.write.table.version": str(version), "hoodie.index.type": "SIMPLE"})
    t.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "dt": ["x", "y"]}))
    props = tmp_path / "t" / ".hoodie" / "hoodie.properties"
    lines = [ln for ln in props.read_text().splitlines() if not ln.startswith("hoodie.table.keygenerator.")]
    # what Apache Hudi records for a class of a user's own (1.x: its type too)
    lines.append("hoodie.table.keygenerator.class=com.acme.SimpleKeyGenerator")
    if version >= 8:
        lines.append("hoodie.table.keygenerator.type=USER_PROVIDED")
    props.write_text("\n".join(lines) + "\n")
    before = sorted(p.name for p in (tmp_path / "t" / "x").iterdir())
    with pytest.raises(UnsupportedTableError, match="com.acme.SimpleKeyGenerator"):
        HudiTable(base).write(pa.table({"id": ["a"], "ts": [2], "dt": ["x"]}))
    assert sorted(p.name for p in (tmp_path / "t" / "x").iterdir()) == before
    want = [("a", "x", 1), ("b", "y", 1)]
    assert rows(HudiTable(base).to_arrow(), ["id", "dt", "ts"]) == want == rows(hudi_rs(base), ["id", "dt", "ts"])

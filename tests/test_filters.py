"""The one filter model (hudi_ds.read.filters): evaluated by pyarrow it keeps exactly the rows a plain-Python
reference keeps, under the Python API's null rule and under Spark's SQL rule; partition pruning never drops a
partition holding a matching row; Spark's filter objects translate into it or are declined."""

from __future__ import annotations

import datetime
import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ds import ConfigError, HudiTable
from hudi_ds.read.filters import RowFilter, normalize, partition_pruner

SCHEMA = pa.schema([("s", pa.string()), ("i", pa.int64()), ("b", pa.bool_())])
VALUES = {"s": st.sampled_from(["a", "b", "c", None]), "i": st.sampled_from([-1, 0, 1, 2, None]),
          "b": st.sampled_from([True, False, None])}
LITERALS = {"s": st.sampled_from(["a", "b", "z"]), "i": st.sampled_from([-1, 0, 1, 5]), "b": st.booleans()}
COMPARE = {"=": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
           "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}


@st.composite
def a_filter(draw):
    col = draw(st.sampled_from(["s", "i", "b"]))
    op = draw(st.sampled_from([*COMPARE, "in", "not in"]))
    if op in ("in", "not in"):
        return (col, op, draw(st.lists(LITERALS[col], min_size=1, max_size=3)))
    if col == "b" and op not in ("=", "!="):
        op = "="
    return (col, op, draw(LITERALS[col]))


def keeps(row: dict, flt: tuple, sql_nulls: bool) -> bool:
    """The reference: SQL three-valued logic, where only a true predicate keeps a row; `not in` keeps null
    rows under the Python API's (pyarrow's) rule."""
    col, op, value = flt
    x = row[col]
    if x is None:
        return op == "not in" and not sql_nulls
    if op == "in":
        return x in value
    if op == "not in":
        return x not in value
    return COMPARE[op](x, value)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.fixed_dictionaries(VALUES), max_size=12), filters=st.lists(a_filter(), max_size=3),
       sql_nulls=st.booleans())
def test_evaluation_matches_the_reference(rows, filters, sql_nulls):
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    got = RowFilter(tuple(normalize(filters, SCHEMA)), sql_nulls).apply(table).to_pylist()
    assert got == [r for r in rows if all(keeps(r, f, sql_nulls) for f in filters)]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), col=st.sampled_from(["s", "i"]))
def test_partition_pruning_keeps_every_partition_the_row_filter_keeps(tmp_path_factory, data, col):
    """Null partition values (the default partition) included: the pruner asks the row filter's null rule,
    so `not in` keeps null rows through the Python API and drops them under Spark's SQL rule."""
    rows = data.draw(st.lists(st.fixed_dictionaries(VALUES), min_size=1, max_size=6))
    flt = data.draw(a_filter().filter(lambda f: f[0] == col))
    t = HudiTable.create(str(tmp_path_factory.mktemp("p") / "t"), table_name="p", record_key="k",
                         partition_by=col, buckets=1)
    t.write(pa.Table.from_pylist([{"k": f"k{n}", **r} for n, r in enumerate(rows)],
                                 schema=pa.schema([("k", pa.string()), *SCHEMA])))
    stored = t.to_arrow().to_pylist()
    for sql_nulls in (False, True):
        keep = partition_pruner(t.config, normalize([flt], t.schema), t.schema, sql_nulls=sql_nulls)
        assert keep is not None
        for r in stored:
            if keeps(r, flt, sql_nulls):
                assert keep(r["_hoodie_partition_path"]), (r, flt, sql_nulls)
    assert sorted(r["k"] for r in t.to_arrow(filters=[flt]).to_pylist()) == sorted(
        r["k"] for r in stored if keeps(r, flt, sql_nulls=False))


def test_not_in_keeps_rows_of_a_null_integer_partition(tmp_path, capsys):
    """The Python API and the CLI follow pyarrow's `not in`: a null partition value is not in the list."""
    from hudi_ds.cli import main

    path = str(tmp_path / "t")
    t = HudiTable.create(path, table_name="t", record_key="k", partition_by="p", buckets=1)
    t.write(pa.table({"k": ["a", "b", "c"], "p": pa.array([1, 2, None], pa.int64())}))
    assert sorted(t.to_arrow(filters=[("p", "not in", [1])])["k"].to_pylist()) == ["b", "c"]
    assert sorted(t.to_arrow(filters=[("p", "!=", 1)])["k"].to_pylist()) == ["b"]  # a comparison is never true
    assert main(["show", path, "--where", "p not in 1", "--json"]) == 0
    assert sorted(r["k"] for r in json.loads(capsys.readouterr().out)["rows"]) == ["b", "c"]


def test_spark_filters_translate_into_the_model_or_are_declined():
    from pyspark.sql.datasource import EqualNullSafe, EqualTo, GreaterThan, In, IsNull, Not, StringStartsWith

    from hudi_ds.spark.pushdown import translate

    schema = pa.schema([("s", pa.string()), ("i", pa.int32()), ("f", pa.float64()), ("d", pa.date32()),
                        ("t", pa.timestamp("us"))])
    assert translate(EqualTo(("s",), "a"), schema) == ("s", "=", "a")
    assert translate(EqualNullSafe(("i",), 3), schema) == ("i", "=", 3)
    assert translate(Not(EqualTo(("i",), 3)), schema) == ("i", "!=", 3)
    assert translate(Not(In(("i",), (1, 2))), schema) == ("i", "not in", [1, 2])
    assert translate(GreaterThan(("d",), datetime.date(2024, 1, 1)), schema) == ("d", ">", datetime.date(2024, 1, 1))
    for declined in (EqualTo(("f",), 1.5), In(("i",), (1, None)), IsNull(("s",)), Not(EqualNullSafe(("s",), "a")),
                     StringStartsWith(("s",), "a"), GreaterThan(("i",), 2**40), EqualTo(("nope",), 1),
                     EqualTo(("t",), 0), EqualTo(("s", "x"), "a")):
        assert translate(declined, schema) is None, declined
    # the translated NOT IN drops null rows, as Spark's SQL does
    table = pa.table({"i": pa.array([1, None, 3], pa.int32())})
    spark_filter = translate(Not(In(("i",), (1,))), table.schema)
    assert RowFilter((spark_filter,), sql_nulls=True).apply(table)["i"].to_pylist() == [3]


def test_bad_filters_are_config_errors():
    with pytest.raises(ConfigError, match="cannot be compared"):
        RowFilter((("i", "=", "abc"),)).apply(pa.table({"i": [1]}))
    with pytest.raises(ConfigError, match="not supported"):
        normalize([("i", "like", 1)], SCHEMA)

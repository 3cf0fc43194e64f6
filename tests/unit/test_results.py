"""Result rows with their RowKind, Flink's print formats, and TableResult (no server)."""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import pickle

import pytest

from tableapi import Row, RowKind, TableResult
from tableapi.result import tableau
from tableapi.types import BIGINT, DOUBLE, STRING, RowType


def test_row_kind_short_strings():
    assert [k.short_string for k in RowKind] == ["+I", "-U", "+U", "-D"]
    assert [k.value for k in RowKind] == [0, 1, 2, 3]
    assert RowKind(2) is RowKind.UPDATE_AFTER


def test_row_repr_is_flink_style():
    assert repr(Row.of(RowKind.INSERT, ("id", "name"), (1, "Euro"))) == "+I[1, Euro]"
    assert repr(Row.of(RowKind.UPDATE_BEFORE, ("n",), (1,))) == "-U[1]"
    assert repr(Row.of(RowKind.UPDATE_AFTER, ("n",), (2,))) == "+U[2]"
    assert repr(Row.of(RowKind.DELETE, ("a", "b"), (None, 1.5))) == "-D[<NULL>, 1.5]"
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 678000)
    assert repr(Row.of(RowKind.INSERT, ("ts",), (ts,))) == "+I[2024-01-02 03:04:05.678]"
    assert repr(Row.of(RowKind.INSERT, ("d",), (decimal.Decimal("1.50"),))) == "+I[1.50]"


def test_row_is_a_tuple_with_names_and_kind():
    row = Row.of(RowKind.INSERT, ("id", "currency", "rate"), (1, "Euro", 114))
    assert row == (1, "Euro", 114)
    assert row[1] == "Euro"
    assert len(row) == 3
    assert row.kind is RowKind.INSERT
    assert row.as_dict() == {"id": 1, "currency": "Euro", "rate": 114}


def test_row_attribute_access_by_name():
    row = Row.of(RowKind.INSERT, ("id", "currency"), (1, "Euro"))
    assert row.id == 1
    assert row.currency == "Euro"


def test_row_attribute_error_lists_the_fields():
    row = Row.of(RowKind.INSERT, ("id", "currency"), (1, "Euro"))
    with pytest.raises(
        AttributeError,
        match=r"Row has no field 'Currency'; fields: "
        r"\['id', 'currency'\]",
    ):
        _ = row.Currency
    assert not hasattr(row, "rate")
    assert getattr(row, "rate", "default") == "default"


def test_row_copies_and_pickles():
    row = Row.of(RowKind.UPDATE_AFTER, ("id", "name"), (1, "Euro"))
    for clone in (pickle.loads(pickle.dumps(row)), copy.deepcopy(row), copy.copy(row)):
        assert clone == row
        assert clone.kind is RowKind.UPDATE_AFTER
        assert clone.name == "Euro"
        assert repr(clone) == "+U[1, Euro]"


def test_tableau_format():
    text = tableau(
        ["id", "currency", "rate"],
        [(1, "Euro", 114.5), (22, None, None), (3, "Yen", decimal.Decimal("1.25"))],
    )
    assert text == "\n".join(
        [
            "+----+----------+--------+",
            "| id | currency | rate   |",
            "+----+----------+--------+",
            "|  1 | Euro     |  114.5 |",
            "| 22 | <NULL>   | <NULL> |",
            "|  3 | Yen      |   1.25 |",
            "+----+----------+--------+",
            "3 rows in set",
        ]
    )


def test_tableau_numbers_right_aligned_text_left_aligned():
    text = tableau(["name", "n"], [("a", 1000), ("bbbbbb", 2)])
    lines = text.splitlines()
    assert lines[3] == "| a      | 1000 |"
    assert lines[4] == "| bbbbbb |    2 |"
    assert lines[-1] == "2 rows in set"


def test_tableau_booleans_and_timestamps_are_not_numbers():
    text = tableau(["flag", "ts"], [(True, dt.datetime(2024, 1, 2, 3, 4, 5))])
    assert "| True | 2024-01-02 03:04:05.000 |" in text.splitlines()
    assert text.endswith("1 row in set")


def test_tableau_of_no_rows():
    assert tableau(["a"], []) == "+---+\n| a |\n+---+\n+---+\n0 rows in set"


class FakeDataFrame:
    """Stands in for a Spark Connect DataFrame: ``toLocalIterator()`` yields tuples."""

    def __init__(self, rows):
        self.rows = rows

    def toLocalIterator(self):
        yield from self.rows


ROW_TYPE = RowType.of(("id", BIGINT), ("currency", STRING), ("rate", DOUBLE))


def test_table_result_collect_gives_insert_rows():
    result = TableResult(FakeDataFrame([(1, "Euro", 114.0), (2, "Yen", None)]), ROW_TYPE)
    rows = result.collect()
    assert [repr(r) for r in rows] == ["+I[1, Euro, 114.0]", "+I[2, Yen, <NULL>]"]
    assert all(r.kind is RowKind.INSERT for r in rows)
    assert rows[1].currency == "Yen"
    assert result.column_names == ("id", "currency", "rate")


def test_table_result_print(capsys):
    TableResult(FakeDataFrame([(1, "Euro", 114.0)]), ROW_TYPE).print()
    assert (
        capsys.readouterr().out
        == "\n".join(
            [
                "+----+----------+-------+",
                "| id | currency | rate  |",
                "+----+----------+-------+",
                "|  1 | Euro     | 114.0 |",
                "+----+----------+-------+",
                "1 row in set",
            ]
        )
        + "\n"
    )


def test_table_result_without_rows():
    result = TableResult(None, ROW_TYPE)
    assert result.collect() == []
    frame = result.materialize()
    assert list(frame.columns) == ["id", "currency", "rate"]
    assert len(frame) == 0


def test_changelog_table_holds_the_table_not_the_changelog():
    # 100k updates of one row: the running table keeps one row, whatever the changelog's length
    # (counting every row ever seen, as a dict that never forgets, holds 100k).
    import tracemalloc

    from tableapi.result import ChangelogTable

    table = ChangelogTable()
    tracemalloc.start()
    table.apply(RowKind.INSERT, ("k", 0))
    for v in range(100_000):
        table.apply(RowKind.UPDATE_BEFORE, ("k", v))
        table.apply(RowKind.UPDATE_AFTER, ("k", v + 1))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert table.rows() == [("k", 100_000)]
    assert peak < 100_000, f"peak {peak:,} bytes while applying the changelog"


def test_changelog_table_is_a_multiset_in_the_order_rows_came_in():
    from tableapi.result import ChangelogTable, apply_changelog

    table = ChangelogTable()
    changes = [
        (RowKind.INSERT, ("a",)),
        (RowKind.INSERT, ("b",)),
        (RowKind.INSERT, ("a",)),
        (RowKind.DELETE, ("c",)),  # retracted before its insert within a batch: fine
        (RowKind.INSERT, ("c",)),
        (RowKind.DELETE, ("a",)),
        (RowKind.DELETE, ("a",)),
        (RowKind.UPDATE_AFTER, ("a",)),  # back: after b, as Flink's SQL client shows it
    ]
    for kind, row in changes:
        table.apply(kind, row)
    assert table.rows() == [("b",), ("a",)]
    assert apply_changelog(Row.of(k, ("x",), r) for k, r in changes) == [("b",), ("a",)]
    table.apply(RowKind.DELETE, ("z",))
    with pytest.raises(RuntimeError, match=r"retracts rows it never inserted, e.g. \('z',\)"):
        table.rows()


def test_collect_is_a_list_and_pyflinks_context_manager():
    result = TableResult(FakeDataFrame([(1, "Euro", 114.0), (2, "Yen", None)]), ROW_TYPE)
    with result.collect() as rows:
        assert [r.currency for r in rows] == ["Euro", "Yen"]
    assert rows == [(1, "Euro", 114.0), (2, "Yen", None)]
    assert isinstance(rows, list)


def test_iterate_reads_rows_as_they_come_and_close_stops_the_reading():
    read: list[int] = []
    stopped: list[bool] = []

    class Frame:
        def toLocalIterator(self):
            try:
                for i in range(1_000):
                    read.append(i)
                    yield (i, "x", 1.0)
            finally:
                stopped.append(True)

    with TableResult(Frame(), ROW_TYPE).iterate() as rows:
        first = [next(rows), next(rows)]
    assert [r.id for r in first] == [0, 1]
    assert read == [0, 1]  # nothing read ahead of what was asked
    assert stopped == [True]  # leaving the block closed the reading

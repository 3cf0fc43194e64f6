"""What Nexmark's queries do on this product today, in one place: the test (test_nexmark)
checks every entry is still so, so that these lists can only shrink.

- ``UNSUPPORTED``: queries the product refuses, with its own error (a ValidationError or
  SqlParserError naming what it lacks), before anything runs; and why.
- ``FLINK_REFUSES``: queries Flink 2.3 refuses as written; the product must refuse them too.
- ``DIFFERENT``: queries the product runs whose answer differs from Flink's: compare's
  status (``different``: rows, ``types``: only column types) and what differs, minimized. The
  test expects that status and fails once the answers agree (or differ otherwise).
- ``CLOCK_DEPENDENT``: queries whose answer depends on the wall clock (processing time), so
  neither side's answer is fixed: the test checks the product runs them and that its rows
  are consistent with the events (see its reason), not Flink's rows.
- ``ACCEPTS_WHAT_FLINK_REFUSES``: Nexmark's own text of a query adapted here, which Flink 2.3
  refuses and the product accepts (the test checks it still does).
"""

from __future__ import annotations

UNSUPPORTED: dict[str, str] = {
    "q9": "ROW_NUMBER() OVER (PARTITION BY ...) (Top-1 per auction): OVER is not supported",
    "q15": "aggregate FILTER (WHERE ...) clauses are not supported",
    "q16": "aggregate FILTER (WHERE ...) clauses are not supported",
    "q17": "aggregate FILTER (WHERE ...) clauses are not supported",
    "q18": "ROW_NUMBER() OVER (PARTITION BY ...) (deduplication): OVER is not supported",
    "q19": "ROW_NUMBER() OVER (PARTITION BY ...) (Top-10 per auction): OVER is not supported",
    "q22": "SPLIT_INDEX, a Flink built-in function the product lacks",
}

FLINK_REFUSES: dict[str, str] = {
    "q6": "Column 'rownum' not found: the query filters on ROW_NUMBER()'s alias in the SELECT "
    "that defines it (Nexmark marks it a TODO: OVER cannot consume retractions)",
}

DIFFERENT: dict[str, tuple[str, str]] = {}

#: query -> why its answer depends on the clock, and what the test checks instead.
CLOCK_DEPENDENT: dict[str, str] = {
    "q12": "TUMBLE over PROCTIME(): a window fires when the server's clock passes its end, "
    "which a bounded run rarely lives to see (Flink's stored answer is empty: its job ends "
    "first); checked: it runs, insert-only, with Flink's columns and types, and the windows "
    "that fired count each bid at most once (their bid_count sum to at most the bids)",
}

#: Nexmark's own text that Flink 2.3 refuses and the product accepts, where a query here is
#: adapted: query -> (Nexmark's text, the adapted text, why). The test checks the product
#: still accepts Nexmark's text.
ACCEPTS_WHAT_FLINK_REFUSES: dict[str, tuple[str, str, str]] = {
    "q23": (
        "A.dateTime AS auction_dateTime",
        "A.`dateTime` AS auction_dateTime",
        "Flink 2.3's parser reserves DATETIME: `SELECT dateTime FROM t` and `SELECT A.dateTime "
        'FROM t A` fail (SqlParserException: Encountered "dateTime FROM" / ". dateTime"); '
        "the product takes both",
    ),
}

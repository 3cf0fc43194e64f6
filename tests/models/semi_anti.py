"""Flink's ``StreamingSemiAntiJoinOperator`` as a row-based StatefulProcessor: the model the
JVM ``join`` operator's semi and anti joins are compared with.

The left side keeps association counts (Flink's OuterJoinRecordStateView), the right side
only its rows (with copies counted); the state layout and TTL are those of ``regular.py``.
Output rows are the left fields only.

- semi: a left row is out while it has at least one match;
- anti: a left row is out while it has none.

Row kinds follow Flink: a left row is emitted with its own kind (+I/+U/-U/-D); a right row
that gives a left row its first match (or takes its last) emits that left row with the right
row's kind for semi joins, and -D / +I for anti joins.
"""

from __future__ import annotations

from server_ext.joins.spec import ANTI, DELETE, INSERT, SEMI_ANTI_KINDS, UPDATE_AFTER, JoinSpec
from tests.models.regular import JoinProcessorBase
from tests.models.state import ASSOC, COUNT, ROW, WRITTEN, Record

__all__ = ["SemiAntiJoinProcessor"]


class SemiAntiJoinProcessor(JoinProcessorBase):
    """LEFT SEMI / LEFT ANTI join."""

    def __init__(self, spec: JoinSpec) -> None:
        if spec.kind not in SEMI_ANTI_KINDS:
            raise ValueError(f"SemiAntiJoinProcessor runs semi/anti joins, not {spec.kind}")
        super().__init__(spec)
        self._anti = spec.kind == ANTI

    def left_outer(self) -> bool:
        return True  # left rows count their matches

    def right_outer(self) -> bool:
        return False

    def process_left(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        matches = self.matches(right, row, True)
        n = 0
        for e in matches:
            n += e[COUNT]
        if (n == 0) == self._anti:
            out.append(self._make(kind, *row))
        if kind == INSERT or kind == UPDATE_AFTER:
            self._left.add(left, row, n, now)
        else:
            self._left.retract(left, row, now)

    def process_right(
        self, row: Record, kind: int, left: dict, right: dict, now: int, out: list
    ) -> None:
        matches = self.matches(left, row, False)
        make, anti = self._make, self._anti
        if kind == INSERT or kind == UPDATE_AFTER:
            self._right.add(right, row, -1, now)
            first_kind = DELETE if anti else kind
            for e in matches:
                other, before = e[ROW], e[ASSOC]
                for _ in range(e[COUNT]):
                    if before == 0:  # its first match
                        out.append(make(first_kind, *other))
                    e[ASSOC] = before + 1
                    e[WRITTEN] = now
            return
        self._right.retract(right, row, now)
        last_kind = INSERT if anti else kind
        for e in matches:
            other, before = e[ROW], e[ASSOC]
            for _ in range(e[COUNT]):
                if before == 1:  # its last match
                    out.append(make(last_kind, *other))
                e[ASSOC] = before - 1
                e[WRITTEN] = now

    def unmatched_left(self, row: Record, kind: int, out: list) -> None:
        if self._anti:
            out.append(self._make(kind, *row))

    def unmatched_right(self, row: Record, kind: int, out: list) -> None:
        pass

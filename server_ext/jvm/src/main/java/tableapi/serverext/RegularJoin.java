package tableapi.serverext;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * INNER / LEFT / RIGHT / FULL join, as Flink's {@code StreamingJoinOperator.processElement}
 * (and {@code RegularJoinProcessor} in {@code tests/models/regular.py}, line for line).
 *
 * <p>Row kinds follow Flink: when neither side is outer the input's kind is forwarded (+I/+U on
 * accumulate, -U/-D on retract); otherwise joined rows are +I / -D. Null-padded rows are always
 * +I / -D. Matches are visited in state order, each match's padded row retracted just before
 * its joined row.
 */
final class RegularJoin extends JoinFunction {
  private static final long serialVersionUID = 1L;

  RegularJoin(JoinSpec spec, StructType input) {
    super(spec, input);
  }

  @Override
  void processLeft(Object[] row, byte kind, Entries entries, long now, List<Row> out) {
    process(row, kind, entries.left, entries.right, lv, rv, true, now, out);
  }

  @Override
  void processRight(Object[] row, byte kind, Entries entries, long now, List<Row> out) {
    process(row, kind, entries.right, entries.left, rv, lv, false, now, out);
  }

  @Override
  void unmatchedLeft(Object[] row, byte kind, List<Row> out) {
    if (lv.outer) pad(out, Rows.accumulates(kind) ? Wire.INSERT : Wire.DELETE, row, true);
  }

  @Override
  void unmatchedRight(Object[] row, byte kind, List<Row> out) {
    if (rv.outer) pad(out, Rows.accumulates(kind) ? Wire.INSERT : Wire.DELETE, row, false);
  }

  /** One input row against the other side: the pseudo code of Flink's processElement. */
  private void process(
      Object[] row,
      byte kind,
      Map<Object, SideView.Entry> mine,
      Map<Object, SideView.Entry> theirs,
      SideView sv,
      SideView ov,
      boolean inputIsLeft,
      long now,
      List<Row> out) {
    List<SideView.Entry> matches = matches(theirs, row, inputIsLeft);
    if (Rows.accumulates(kind)) {
      boolean additional = ov.outer && sv.addsMatch(mine, row);
      if (sv.outer) {
        if (matches.isEmpty()) {
          pad(out, Wire.INSERT, row, inputIsLeft);
          sv.add(mine, row, 0, now);
          return;
        }
        int n = accumulateOuter(row, matches, ov.outer, additional, inputIsLeft, now, out);
        sv.add(mine, row, n, now);
        return;
      }
      sv.add(mine, row, -1, now);
      if (matches.isEmpty()) return;
      if (ov.outer) {
        accumulateOuter(row, matches, true, additional, inputIsLeft, now, out);
      } else { // inner join: forward +I / +U
        for (SideView.Entry e : matches) {
          for (int c = 0; c < e.count; c++) joined(out, kind, row, e.row, inputIsLeft);
        }
      }
      return;
    }

    sv.retract(mine, row, now);
    if (matches.isEmpty()) {
      if (sv.outer) pad(out, Wire.DELETE, row, inputIsLeft);
      return;
    }
    byte joinedKind = sv.outer ? Wire.DELETE : kind; // an inner side forwards -U / -D
    for (SideView.Entry e : matches) {
      int before = e.assoc;
      for (int c = 0, copies = e.count; c < copies; c++) {
        joined(out, joinedKind, row, e.row, inputIsLeft);
        if (ov.outer) {
          if (before == 1) pad(out, Wire.INSERT, e.row, !inputIsLeft); // its last match left
          e.assoc = before - 1;
          e.written = now;
        }
      }
    }
  }

  /**
   * Emits +I[row, other] per matching copy; a first match retracts the other's padded row.
   * Returns the number of matching copies (the new row's associations).
   */
  private int accumulateOuter(
      Object[] row,
      List<SideView.Entry> matches,
      boolean otherOuter,
      boolean additional,
      boolean inputIsLeft,
      long now,
      List<Row> out) {
    int n = 0;
    for (SideView.Entry e : matches) {
      int before = e.assoc;
      int copies = e.count;
      for (int c = 0; c < copies; c++) {
        if (otherOuter) {
          if (before == 0) pad(out, Wire.DELETE, e.row, !inputIsLeft);
          if (before == 0 || additional) {
            e.assoc = before + 1;
            e.written = now;
          }
        }
        joined(out, Wire.INSERT, row, e.row, inputIsLeft);
      }
      n += copies;
    }
    return n;
  }

  private void joined(List<Row> out, byte kind, Object[] mine, Object[] other, boolean mineIsLeft) {
    out.add(
        mineIsLeft
            ? output(kind, mine, other, rv.width)
            : output(kind, other, mine, rv.width));
  }

  /** A null-padded row: {@code row} on its side, nulls on the other. */
  private void pad(List<Row> out, byte kind, Object[] row, boolean rowIsLeft) {
    out.add(rowIsLeft ? output(kind, row, null, rv.width) : output(kind, null, row, rv.width));
  }
}

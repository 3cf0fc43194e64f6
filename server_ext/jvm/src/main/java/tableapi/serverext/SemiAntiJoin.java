package tableapi.serverext;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * LEFT SEMI / LEFT ANTI join, as Flink's {@code StreamingSemiAntiJoinOperator} (and {@code
 * SemiAntiJoinProcessor} in {@code tests/models/semi_anti.py}, line for line).
 *
 * <p>The left side keeps association counts, the right side only its rows (copies counted).
 * Output rows are the left fields only: a semi join emits a left row while it has a match, an
 * anti join while it has none. A left row is emitted with its own kind; a right row that gives
 * a left row its first match (or takes its last) emits that left row with the right row's kind
 * (semi) or -D / +I (anti).
 */
final class SemiAntiJoin extends JoinFunction {
  private static final long serialVersionUID = 1L;

  private final boolean anti;

  SemiAntiJoin(JoinSpec spec, StructType input) {
    super(spec, input);
    this.anti = spec.kind.equals("anti");
  }

  @Override
  void processLeft(Object[] row, byte kind, Entries entries, long now, List<Row> out) {
    int n = 0;
    for (SideView.Entry e : matches(entries.right, row, true)) n += e.count;
    if ((n == 0) == anti) out.add(output(kind, row, null, 0));
    if (Rows.accumulates(kind)) {
      lv.add(entries.left, row, n, now);
    } else {
      lv.retract(entries.left, row, now);
    }
  }

  @Override
  void processRight(Object[] row, byte kind, Entries entries, long now, List<Row> out) {
    List<SideView.Entry> matches = matches(entries.left, row, false);
    if (Rows.accumulates(kind)) {
      rv.add(entries.right, row, -1, now);
      byte first = anti ? Wire.DELETE : kind;
      for (SideView.Entry e : matches) {
        int before = e.assoc;
        for (int c = 0, copies = e.count; c < copies; c++) {
          if (before == 0) out.add(output(first, e.row, null, 0)); // its first match
          e.assoc = before + 1;
          e.written = now;
        }
      }
      return;
    }
    rv.retract(entries.right, row, now);
    byte last = anti ? Wire.INSERT : kind;
    for (SideView.Entry e : matches) {
      int before = e.assoc;
      for (int c = 0, copies = e.count; c < copies; c++) {
        if (before == 1) out.add(output(last, e.row, null, 0)); // its last match
        e.assoc = before - 1;
        e.written = now;
      }
    }
  }

  @Override
  void unmatchedLeft(Object[] row, byte kind, List<Row> out) {
    if (anti) out.add(output(kind, row, null, 0));
  }

  @Override
  void unmatchedRight(Object[] row, byte kind, List<Row> out) {}
}

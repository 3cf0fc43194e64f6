package tableapi.serverext;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/** What the operators share over their rows: row kinds, output rows, filterNulls, insert-only. */
final class Rows {
  private Rows() {}

  /** +I or +U: the row is added (Flink's RowKind accumulate messages). */
  static boolean accumulates(byte kind) {
    return kind == Wire.INSERT || kind == Wire.UPDATE_AFTER;
  }

  /** -U or -D: the row is taken back. */
  static boolean retracts(byte kind) {
    return kind == Wire.UPDATE_BEFORE || kind == Wire.DELETE;
  }

  /** An output row: {@code __kind}, then the parts' fields (a null part: that many nulls). */
  static Row output(byte kind, Object[] left, int leftWidth, Object[] right, int rightWidth) {
    Object[] values = new Object[1 + leftWidth + rightWidth];
    values[0] = kind;
    if (left != null) System.arraycopy(left, 0, values, 1, leftWidth);
    if (right != null) System.arraycopy(right, 0, values, 1 + leftWidth, rightWidth);
    return RowFactory.create(values);
  }

  /** Flink's filterNulls: a null in a key that is not null-safe never equals anything. */
  static boolean neverMatches(Row key, boolean[] nullSafe) {
    for (int i = 0; i < key.length(); i++) {
      if (key.isNullAt(i) && (i >= nullSafe.length || !nullSafe[i])) return true;
    }
    return false;
  }

  static IllegalArgumentException notInsertOnly(String operator, byte kind) {
    return new IllegalArgumentException(
        operator + ": the inputs must be insert-only, but a "
            + (kind == Wire.UPDATE_BEFORE ? "-U" : "-D")
            + " row arrived; it cannot retract results it has emitted (plan a regular join"
            + " instead)");
  }
}

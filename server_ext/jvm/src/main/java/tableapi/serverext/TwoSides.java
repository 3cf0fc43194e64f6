package tableapi.serverext;

import org.apache.spark.sql.Row;

/**
 * The two inputs of the interval and temporal joins: each side's row format (how their state
 * value holds its rows), the residual condition between them, and output rows (left's fields,
 * then right's). Built on each executor on first use: none of it is serializable.
 */
final class TwoSides {
  final RowCodec.RowFormat left;
  final RowCodec.RowFormat right;
  private final Condition condition; // null: none

  TwoSides(JoinSpec spec) {
    this.left = new RowCodec.RowFormat(spec.left.schema(), spec.java8Time);
    this.right = new RowCodec.RowFormat(spec.right.schema(), spec.java8Time);
    this.condition = Condition.compile(spec.residualJson, spec.timeZone);
  }

  /** Does the residual hold for the pair (True, not False or unknown)? */
  boolean matches(Object[] l, Object[] r) {
    return condition == null || condition.test(l, r);
  }

  /** An output row: {@code __kind}, then both sides' fields (a null side: nulls). */
  Row output(byte kind, Object[] l, Object[] r) {
    return Rows.output(kind, l, left.width, r, right.width);
  }
}

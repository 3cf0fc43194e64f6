package tableapi.serverext;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/** What the operators share over their input union: ordering, fields and output rows. */
final class Rows {
  private Rows() {}

  /**
   * The position of {@code __kind} or {@code __seq} in the union, -1 when it has none: a union
   * of insert-only inputs leaves both out (every row is +I, in arrival order), which spares
   * each row a string and each key a sort.
   */
  static int optional(StructType input, String name) {
    return List.of(input.fieldNames()).indexOf(name);
  }

  /** The row's kind ({@code __kind}, or +I without one). */
  static byte kind(Row row, int kindAt) {
    return kindAt < 0 ? Wire.INSERT : row.getByte(kindAt);
  }

  /**
   * A key's rows in {@code __seq} order (a stable sort: equal ones keep their order); without
   * {@code __seq} ({@code seqAt} -1) in arrival order.
   */
  static List<Row> ordered(Iterator<Row> rows, int seqAt) {
    List<Row> out = new ArrayList<>();
    rows.forEachRemaining(out::add);
    if (seqAt >= 0 && out.size() > 1) {
      out.sort((a, b) -> Values.compareSeq(a.get(seqAt), b.get(seqAt)));
    }
    return out;
  }

  /** The fields of the struct column {@code at}. */
  static Object[] fields(Row row, int at, int width) {
    Row struct = row.getStruct(at);
    Object[] values = new Object[width];
    for (int i = 0; i < width; i++) values[i] = struct.get(i);
    return values;
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

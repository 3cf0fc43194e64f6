package tableapi.serverext;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * Where an operator finds the columns of its input union (the tagged union of {@code
 * server_ext/joins/spec.py}): the side tag, {@code __kind}, {@code __seq} and each input's
 * struct. A union of insert-only inputs leaves {@code __kind} and {@code __seq} out (every row
 * is +I, in arrival order), which spares each row a string and each key a sort.
 */
final class InputUnion implements Serializable {
  private static final long serialVersionUID = 1L;

  private final int sideAt;
  private final int kindAt; // -1: none
  private final int seqAt; // -1: none
  private final int[] structAt; // by side tag

  private InputUnion(StructType input, String[] structs) {
    this.sideAt = input.fieldIndex(Wire.SIDE);
    this.kindAt = optional(input, Wire.KIND);
    this.seqAt = optional(input, Wire.SEQ);
    this.structAt = new int[structs.length];
    for (int i = 0; i < structs.length; i++) structAt[i] = input.fieldIndex(structs[i]);
  }

  /** A two-input join's union: {@code __l} and {@code __r}. */
  static InputUnion twoInputs(StructType input) {
    return new InputUnion(input, new String[] {Wire.LEFT_ROW, Wire.RIGHT_ROW});
  }

  /** The multi-way join's union: {@code __in0}, {@code __in1}, ... */
  static InputUnion inputs(StructType input, int count) {
    String[] structs = new String[count];
    for (int i = 0; i < count; i++) structs[i] = Wire.INPUT_PREFIX + i;
    return new InputUnion(input, structs);
  }

  private static int optional(StructType input, String name) {
    return List.of(input.fieldNames()).indexOf(name);
  }

  /**
   * A key's rows in {@code __seq} order (a stable sort: equal ones keep their order); without
   * {@code __seq} in arrival order.
   */
  List<Row> ordered(Iterator<Row> rows) {
    List<Row> out = new ArrayList<>();
    rows.forEachRemaining(out::add);
    if (seqAt >= 0 && out.size() > 1) {
      out.sort((a, b) -> Values.compareSeq(a.get(seqAt), b.get(seqAt)));
    }
    return out;
  }

  /** The row's kind ({@code __kind}, or +I without one). */
  byte kind(Row row) {
    return kindAt < 0 ? Wire.INSERT : row.getByte(kindAt);
  }

  /** The row's input (its side tag). */
  byte side(Row row) {
    return row.getByte(sideAt);
  }

  boolean isLeft(Row row) {
    return row.getByte(sideAt) == Wire.LEFT;
  }

  /** The fields of the row's own input ({@code width} of them). */
  Object[] fields(Row row, int width) {
    Row struct = row.getStruct(structAt[row.getByte(sideAt)]);
    Object[] values = new Object[width];
    for (int i = 0; i < width; i++) values[i] = struct.get(i);
    return values;
  }
}

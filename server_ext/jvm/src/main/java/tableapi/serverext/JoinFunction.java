package tableapi.serverext;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.types.StructType;

/**
 * What the regular and the semi/anti join share (the JVM twin of {@code JoinProcessorBase} in
 * {@code server_ext/joins/regular.py}): rows of a key in {@code __seq} order, Flink's
 * filterNulls, loading the key's state (one binary value, both sides), TTL pruning and saving.
 * Subclasses process one left or right row.
 *
 * <p>State TTL: {@code flatMapGroupsWithState} has no TTL of its own, so each entry carries the
 * processing time of its last write and is dropped once {@code written + ttl <= now} when its
 * key is next loaded (which is all the output ever sees). A processing-time timeout at the
 * latest entry's expiry then clears keys that see no more rows, as the Python tier's
 * ValueState TTL does.
 */
abstract class JoinFunction implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;

  protected final JoinSpec spec;
  private final int sideAt;
  private final int kindAt;
  private final int seqAt;
  private final int leftAt;
  private final int rightAt;

  // Built on first use in each executor (not serialized).
  private transient RowCodec codec;
  private transient Condition condition;
  protected transient SideView lv;
  protected transient SideView rv;

  JoinFunction(JoinSpec spec, StructType input) {
    this.spec = spec;
    this.sideAt = input.fieldIndex(Wire.SIDE);
    this.kindAt = Rows.optional(input, Wire.KIND);
    this.seqAt = Rows.optional(input, Wire.SEQ);
    this.leftAt = input.fieldIndex(Wire.LEFT_ROW);
    this.rightAt = input.fieldIndex(Wire.RIGHT_ROW);
  }

  /** The operator for {@code spec}: Flink's StreamingJoinOperator or its semi/anti twin. */
  static JoinFunction of(JoinSpec spec, StructType input) {
    return spec.semiOrAnti() ? new SemiAntiJoin(spec, input) : new RegularJoin(spec, input);
  }

  private void init() {
    if (codec == null) {
      lv = new SideView(spec.left, spec.leftOuter());
      rv = new SideView(spec.right, spec.rightOuter());
      condition = Condition.compile(spec.residualJson, spec.timeZone);
      codec = new RowCodec(spec);
    }
  }

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    init();
    if (state.hasTimedOut()) {
      expire(state);
      return Collections.emptyIterator();
    }
    List<Row> ordered = Rows.ordered(rows, seqAt);
    List<Row> out = new ArrayList<>();
    if (neverMatches(key)) {
      for (Row row : ordered) {
        if (row.getByte(sideAt) == Wire.LEFT) {
          unmatchedLeft(record(row, leftAt, lv), Rows.kind(row, kindAt), out);
        } else {
          unmatchedRight(record(row, rightAt, rv), Rows.kind(row, kindAt), out);
        }
      }
      return out.iterator();
    }

    long now = spec.hasTtl() ? state.getCurrentProcessingTimeMs() : -1;
    Map<Object, SideView.Entry> left = new LinkedHashMap<>();
    Map<Object, SideView.Entry> right = new LinkedHashMap<>();
    boolean stored = state.exists();
    if (stored) codec.decode(state.get(), lv, left, rv, right);
    boolean dirty = lv.prune(left, now) | rv.prune(right, now);
    for (Row row : ordered) {
      byte kind = Rows.kind(row, kindAt);
      if (row.getByte(sideAt) == Wire.LEFT) {
        processLeft(record(row, leftAt, lv), kind, left, right, now, out);
      } else {
        processRight(record(row, rightAt, rv), kind, left, right, now, out);
      }
    }
    // Any row changes its own side, and the other side's associations on outer sides: the
    // one binary value is written when either changed.
    save(state, stored, left, right, dirty || !ordered.isEmpty(), now);
    return out.iterator();
  }

  /** A key's timeout: its entries expired (nothing is emitted, as with Flink's state TTL). */
  private void expire(GroupState<byte[]> state) {
    if (!state.exists()) return;
    long now = state.getCurrentProcessingTimeMs();
    Map<Object, SideView.Entry> left = new LinkedHashMap<>();
    Map<Object, SideView.Entry> right = new LinkedHashMap<>();
    codec.decode(state.get(), lv, left, rv, right);
    boolean dirty = lv.prune(left, now) | rv.prune(right, now);
    save(state, true, left, right, dirty, now);
  }

  private void save(
      GroupState<byte[]> state,
      boolean stored,
      Map<Object, SideView.Entry> left,
      Map<Object, SideView.Entry> right,
      boolean dirty,
      long now) {
    if (left.isEmpty() && right.isEmpty()) {
      if (stored) state.remove();
      return;
    }
    if (dirty) state.update(codec.encode(left, right));
    if (spec.hasTtl()) { // the timeout is reset on every call: set it again
      long last = Math.max(lv.lastExpiry(left), rv.lastExpiry(right));
      if (last > now) state.setTimeoutDuration(last - now);
    }
  }

  /** Flink's filterNulls: a null in a key that is not null-safe never equals anything. */
  private boolean neverMatches(Row key) {
    boolean[] safe = spec.nullSafe;
    for (int i = 0; i < key.length(); i++) {
      if (key.isNullAt(i) && (i >= safe.length || !safe[i])) return true;
    }
    return false;
  }

  private static Object[] record(Row row, int at, SideView view) {
    Row struct = row.getStruct(at);
    Object[] values = new Object[view.width];
    for (int i = 0; i < values.length; i++) values[i] = struct.get(i);
    return values;
  }

  /** The entries of the other side's map that {@code row} joins with (residual applied). */
  protected final List<SideView.Entry> matches(
      Map<Object, SideView.Entry> rows, Object[] row, boolean inputIsLeft) {
    List<SideView.Entry> out = new ArrayList<>(rows.size());
    for (SideView.Entry e : rows.values()) {
      if (condition == null
          || (inputIsLeft ? condition.test(row, e.row) : condition.test(e.row, row))) {
        out.add(e);
      }
    }
    return out;
  }

  /** An output row: {@code __kind}, then the given fields (null for a missing side). */
  protected final Row output(byte kind, Object[] left, Object[] right, int rightWidth) {
    int lw = lv.width;
    Object[] values = new Object[1 + lw + rightWidth];
    values[0] = kind;
    if (left != null) System.arraycopy(left, 0, values, 1, lw);
    if (right != null) System.arraycopy(right, 0, values, 1 + lw, rightWidth);
    return RowFactory.create(values);
  }

  protected static boolean accumulates(byte kind) {
    return kind == Wire.INSERT || kind == Wire.UPDATE_AFTER;
  }

  // Subclass hooks.
  abstract void processLeft(
      Object[] row,
      byte kind,
      Map<Object, SideView.Entry> left,
      Map<Object, SideView.Entry> right,
      long now,
      List<Row> out);

  abstract void processRight(
      Object[] row,
      byte kind,
      Map<Object, SideView.Entry> left,
      Map<Object, SideView.Entry> right,
      long now,
      List<Row> out);

  abstract void unmatchedLeft(Object[] row, byte kind, List<Row> out);

  abstract void unmatchedRight(Object[] row, byte kind, List<Row> out);
}

package tableapi.serverext;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.types.StructType;

/**
 * What the regular and the semi/anti join share (the JVM twin of {@code JoinProcessorBase} in
 * {@code tests/models/regular.py}): rows of a key in {@code __seq} order, Flink's
 * filterNulls, loading the key's state (one binary value, both sides), TTL pruning and saving.
 * Subclasses process one left or right row.
 *
 * <p>State TTL: {@code flatMapGroupsWithState} has no TTL of its own, so each entry carries the
 * processing time of its last write and is dropped once {@code written + ttl <= now} when its
 * key is next loaded (which is all the output ever sees). A processing-time timeout at the
 * latest entry's expiry then clears keys that see no more rows, as the models'
 * ValueState TTL does (tests/models).
 */
abstract class JoinFunction implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;

  protected final JoinSpec spec;
  private final InputUnion union;

  // Built on first use in each executor (not serialized).
  private transient RowCodec codec;
  private transient Condition condition;
  protected transient SideView lv;
  protected transient SideView rv;

  JoinFunction(JoinSpec spec, StructType input) {
    this.spec = spec;
    this.union = InputUnion.twoInputs(input);
  }

  /** The operator for {@code spec}: Flink's StreamingJoinOperator or its semi/anti twin. */
  static JoinFunction of(JoinSpec spec, StructType input) {
    return spec.semiOrAnti() ? new SemiAntiJoin(spec, input) : new RegularJoin(spec, input);
  }

  /** The {@code join} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    JoinSpec spec = request.twoInput(request.spec().join(), "join", false);
    return new Operator(of(spec, request.input()), spec.output,
        Operator.processingTimeoutIf(spec.hasTtl()));
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
    List<Row> ordered = union.ordered(rows);
    List<Row> out = new ArrayList<>();
    if (Rows.neverMatches(key, spec.nullSafe)) {
      for (Row row : ordered) {
        if (union.isLeft(row)) {
          unmatchedLeft(union.fields(row, lv.width), union.kind(row), out);
        } else {
          unmatchedRight(union.fields(row, rv.width), union.kind(row), out);
        }
      }
      return out.iterator();
    }

    long now = spec.hasTtl() ? state.getCurrentProcessingTimeMs() : -1;
    boolean stored = state.exists();
    Entries entries = new Entries();
    boolean dirty = stored && entries.load(state.get(), now);
    for (Row row : ordered) {
      byte kind = union.kind(row);
      if (union.isLeft(row)) {
        processLeft(union.fields(row, lv.width), kind, entries, now, out);
      } else {
        processRight(union.fields(row, rv.width), kind, entries, now, out);
      }
    }
    // Any row changes its own side, and the other side's associations on outer sides: the
    // one binary value is written when either changed.
    save(state, stored, entries, dirty || !ordered.isEmpty(), now);
    return out.iterator();
  }

  /** A key's timeout: its entries expired (nothing is emitted, as with Flink's state TTL). */
  private void expire(GroupState<byte[]> state) {
    if (!state.exists()) return;
    long now = state.getCurrentProcessingTimeMs();
    Entries entries = new Entries();
    boolean dirty = entries.load(state.get(), now);
    save(state, true, entries, dirty, now);
  }

  /** A key's stored entries, both sides in state order, as the hooks read and change them. */
  final class Entries {
    final Map<Object, SideView.Entry> left = new LinkedHashMap<>();
    final Map<Object, SideView.Entry> right = new LinkedHashMap<>();

    /** Decodes the key's state value, dropping the entries past their TTL (true if any). */
    private boolean load(byte[] value, long now) {
      codec.decode(value, lv, left, rv, right);
      return lv.prune(left, now) | rv.prune(right, now);
    }
  }

  private void save(
      GroupState<byte[]> state, boolean stored, Entries entries, boolean dirty, long now) {
    if (entries.left.isEmpty() && entries.right.isEmpty()) {
      if (stored) state.remove();
      return;
    }
    if (dirty) state.update(codec.encode(entries.left, entries.right));
    if (spec.hasTtl()) { // the timeout is reset on every call: set it again
      long last = Math.max(lv.lastExpiry(entries.left), rv.lastExpiry(entries.right));
      if (last > now) state.setTimeoutDuration(last - now);
    }
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
    return Rows.output(kind, left, lv.width, right, rightWidth);
  }

  // Subclass hooks: one row of the key, given its fields; now is -1 without a TTL.
  abstract void processLeft(Object[] row, byte kind, Entries entries, long now, List<Row> out);

  abstract void processRight(Object[] row, byte kind, Entries entries, long now, List<Row> out);

  /** A row whose key never matches (Flink's filterNulls): nothing is stored. */
  abstract void unmatchedLeft(Object[] row, byte kind, List<Row> out);

  abstract void unmatchedRight(Object[] row, byte kind, List<Row> out);
}

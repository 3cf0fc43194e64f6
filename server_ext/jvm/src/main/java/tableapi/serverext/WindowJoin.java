package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.types.StructType;

/**
 * Flink's window join ({@code WindowJoinOperator}: INNER, LEFT, RIGHT, FULL, SEMI, ANTI) over
 * two inputs of the same window TVF, the JVM twin of {@code tests/models/window_join.py}: per
 * join key, each window's rows of each side are buffered; an event-time timer at {@code
 * window_end - 1} ({@link TimerService}) joins them once the watermark reaches it (Flink's
 * {@code isWindowFired}), emits the pairs whose residual holds ({@code +I} only; outer rows
 * without a match padded with NULLs), and drops the window. A row whose window has fired is
 * late and dropped. A NULL in a key that is not null-safe matches nothing (Flink's {@code
 * JoinConditionWithNullFilters}); an outer row of such a key is still padded.
 *
 * <p>The union's {@code __t} is the row's {@code window_end} in epoch ms: both sides run the
 * same windows, so a window's end names it (Flink keys its window state by the end too).
 *
 * <p>State value (beside the key's timers): {@code byte FORMAT; varint n; n x (zigzag end,
 * varint nl, nl x left row, varint nr, nr x right row)}; timers (event time, {@code end - 1},
 * tag 0).
 */
final class WindowJoin implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final byte FORMAT = 1;

  private final JoinSpec spec;
  private final InputUnion union;
  private final int timeAt;

  private transient TwoSides sides; // built on first use in each executor

  /** A window's buffered rows, in arrival order. */
  private static final class Buffers {
    final List<Object[]> left = new ArrayList<>();
    final List<Object[]> right = new ArrayList<>();
  }

  private WindowJoin(JoinSpec spec, StructType input) {
    this.spec = spec;
    this.union = InputUnion.twoInputs(input);
    this.timeAt = input.fieldIndex(Wire.TIME);
  }

  /**
   * The {@code window_join} section ({@code WindowJoinSpec.wire_section()}): the two inputs,
   * the kind, the null-safe flags of the keys and the residual.
   */
  record Spec(Specs.TwoInput join) {
    static Spec parse(Specs.Envelope envelope) {
      JsonNode s = envelope.section("window_join");
      return new Spec(Specs.TwoInput.parse(s, "window_join", true));
    }
  }

  /** The {@code window_join} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    Spec parsed = Spec.parse(request.spec());
    JoinSpec spec = request.twoInput(parsed.join(), "window_join", true);
    return new Operator(new WindowJoin(spec, request.input()), spec.output,
        GroupStateTimeout.EventTimeTimeout());
  }

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    if (sides == null) sides = new TwoSides(spec);
    long watermark = state.getCurrentWatermarkMs(); // fired: end - 1 <= watermark
    TimerService timers = TimerService.load(state);
    TreeMap<Long, Buffers> windows = decode(timers.value());
    if (!state.hasTimedOut()) {
      for (Row r : union.ordered(rows)) {
        byte kind = union.kind(r);
        if (Rows.retracts(kind)) throw Rows.notInsertOnly("window join", kind);
        if (r.isNullAt(timeAt)) continue; // no window: the TVF assigns every row one
        long end = r.getLong(timeAt);
        if (end - 1 <= watermark) continue; // its window has fired: late, dropped
        boolean isLeft = union.isLeft(r);
        Buffers b = windows.computeIfAbsent(end, x -> new Buffers());
        if (isLeft) {
          b.left.add(union.fields(r, sides.left.width));
        } else {
          b.right.add(union.fields(r, sides.right.width));
        }
        timers.register(TimerService.Domain.EVENT_TIME, end - 1, 0);
      }
    }
    List<Row> out = new ArrayList<>();
    boolean nullKey = Rows.neverMatches(key, spec.nullSafe);
    for (TimerService.Timer t = timers.pollDue(watermark, Long.MIN_VALUE); t != null;
        t = timers.pollDue(watermark, Long.MIN_VALUE)) {
      Buffers b = windows.remove(t.time() + 1);
      if (b != null) join(b.left, b.right, nullKey, out);
    }
    timers.value(windows.isEmpty() ? null : encode(windows));
    timers.save(state, TimerService.Domain.EVENT_TIME);
    return out.isEmpty() ? Collections.emptyIterator() : out.iterator();
  }

  /** One window's rows joined, in Flink's loop order per kind. */
  private void join(List<Object[]> left, List<Object[]> right, boolean nullKey, List<Row> out) {
    switch (spec.kind) {
      case "semi", "anti" -> {
        boolean semi = spec.kind.equals("semi");
        for (Object[] l : left) {
          if (anyMatch(l, right, nullKey) == semi) {
            out.add(Rows.output(Wire.INSERT, l, sides.left.width, null, 0));
          }
        }
      }
      case "right" -> {
        for (Object[] r : right) {
          boolean matched = false;
          for (Object[] l : left) {
            if (matches(l, r, nullKey)) {
              out.add(sides.output(Wire.INSERT, l, r));
              matched = true;
            }
          }
          if (!matched) out.add(sides.output(Wire.INSERT, null, r));
        }
      }
      default -> { // inner, left, full: the left rows outside
        boolean lout = spec.leftOuter();
        boolean rout = spec.rightOuter();
        boolean[] rightMatched = new boolean[right.size()];
        for (Object[] l : left) {
          boolean matched = false;
          for (int i = 0; i < right.size(); i++) {
            if (matches(l, right.get(i), nullKey)) {
              out.add(sides.output(Wire.INSERT, l, right.get(i)));
              matched = true;
              rightMatched[i] = true;
            }
          }
          if (lout && !matched) out.add(sides.output(Wire.INSERT, l, null));
        }
        if (rout) {
          for (int i = 0; i < right.size(); i++) {
            if (!rightMatched[i]) out.add(sides.output(Wire.INSERT, null, right.get(i)));
          }
        }
      }
    }
  }

  private boolean matches(Object[] l, Object[] r, boolean nullKey) {
    return !nullKey && sides.matches(l, r);
  }

  private boolean anyMatch(Object[] l, List<Object[]> right, boolean nullKey) {
    for (Object[] r : right) if (matches(l, r, nullKey)) return true;
    return false;
  }

  // -- the state value -------------------------------------------------------------------------

  private byte[] encode(TreeMap<Long, Buffers> windows) {
    RowCodec.Out out = new RowCodec.Out(16 + 32 * windows.size());
    out.raw(FORMAT, 1);
    out.varint(windows.size());
    for (Map.Entry<Long, Buffers> e : windows.entrySet()) {
      out.zigzag(e.getKey());
      write(out, e.getValue().left, sides.left);
      write(out, e.getValue().right, sides.right);
    }
    return out.bytes();
  }

  private static void write(RowCodec.Out out, List<Object[]> rows, RowCodec.RowFormat format) {
    out.varint(rows.size());
    for (Object[] row : rows) format.write(out, row);
  }

  private TreeMap<Long, Buffers> decode(byte[] bytes) {
    TreeMap<Long, Buffers> windows = new TreeMap<>();
    if (bytes == null) return windows;
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown window join state format");
    for (long i = 0, n = in.varint(); i < n; i++) {
      Buffers b = new Buffers();
      windows.put(in.zigzag(), b);
      read(in, b.left, sides.left);
      read(in, b.right, sides.right);
    }
    return windows;
  }

  private static void read(RowCodec.In in, List<Object[]> rows, RowCodec.RowFormat format) {
    for (long i = 0, n = in.varint(); i < n; i++) rows.add(format.read(in));
  }
}

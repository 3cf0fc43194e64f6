package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.types.StructType;

/**
 * Flink's event-time interval join ({@code RowTimeIntervalJoin}), INNER / LEFT / RIGHT / FULL,
 * the JVM twin of {@code tests/models/interval.py} (its docstring has the semantics, line for
 * line): a left row at {@code lt} and a right row at {@code rt} match when {@code lower <= lt -
 * rt <= upper} and the residual is True; outer rows are padded once the watermark passes their
 * window.
 *
 * <p>One binary value per key: both sides' caches {@code [(time, row, matched)]} sorted by
 * time. The key's one timer (its earliest expiry {@code e + 1}, the first watermark expiring a
 * cached row) is the group's event-time timeout at {@code e}: a flatMapGroupsWithState timeout
 * fires once the watermark is past it.
 */
final class IntervalJoin implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final byte FORMAT = 1;

  private final JoinSpec spec;
  private final long lower;
  private final long upper;
  private final boolean emptyWindow;
  private final boolean lout;
  private final boolean rout;
  private final InputUnion union;
  private final int timeAt;

  private transient TwoSides sides; // built on first use in each executor

  /** A cached row. */
  private static final class Cached implements Bisect.Timed {
    final long time;
    final Object[] row;
    boolean matched;

    Cached(long time, Object[] row, boolean matched) {
      this.time = time;
      this.row = row;
      this.matched = matched;
    }

    @Override
    public long time() {
      return time;
    }
  }

  IntervalJoin(JoinSpec spec, long lowerMs, long upperMs, StructType input) {
    this.spec = spec;
    this.lower = lowerMs;
    this.upper = upperMs;
    this.emptyWindow = lowerMs > upperMs;
    this.lout = spec.kind.equals("left") || spec.kind.equals("full");
    this.rout = spec.kind.equals("right") || spec.kind.equals("full");
    this.union = InputUnion.twoInputs(input);
    this.timeAt = input.fieldIndex(Wire.TIME);
  }

  /**
   * The {@code interval} section ({@code IntervalSpec.wire_section()}): the two inputs and the
   * bounds of right time - left time, in ms.
   */
  record Spec(Specs.TwoInput join, long lowerMs, long upperMs) {
    static Spec parse(Specs.Envelope envelope) {
      JsonNode s = envelope.section("interval");
      return new Spec(Specs.TwoInput.parse(s, "interval", true),
          Specs.integer(s, "lower_ms", "interval"), Specs.integer(s, "upper_ms", "interval"));
    }
  }

  /** The {@code interval} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    Spec interval = Spec.parse(request.spec());
    JoinSpec spec = request.twoInput(interval.join(), "interval", true);
    if (spec.semiOrAnti()) {
      throw new IllegalArgumentException("an interval join is not semi or anti: " + spec.kind);
    }
    return new Operator(new IntervalJoin(spec, interval.lowerMs(), interval.upperMs(),
        request.input()), spec.output,
        GroupStateTimeout.EventTimeTimeout());
  }

  private void init() {
    if (sides == null) sides = new TwoSides(spec);
  }

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    init();
    long watermark = state.getCurrentWatermarkMs();
    if (watermark < 0) {
      throw new IllegalStateException(
          "an interval join needs a watermark: the inputs need withWatermark on their rowtime");
    }
    List<Row> out = new ArrayList<>();
    List<Cached> left = new ArrayList<>();
    List<Cached> right = new ArrayList<>();
    boolean stored = !emptyWindow && state.exists();
    if (stored) decode(state.get(), left, right);
    boolean changed = expire(left, right, watermark, out);
    if (!state.hasTimedOut()) {
      boolean nullKey = Rows.neverMatches(key, spec.nullSafe);
      for (Row row : union.ordered(rows)) {
        byte kind = union.kind(row);
        if (Rows.retracts(kind)) {
          throw Rows.notInsertOnly("interval join", kind);
        }
        boolean isLeft = union.isLeft(row);
        Object[] values = union.fields(row, isLeft ? sides.left.width : sides.right.width);
        if (row.isNullAt(timeAt) || emptyWindow) {
          if (isLeft ? lout : rout) out.add(padded(isLeft, values));
          continue;
        }
        long t = row.getLong(timeAt);
        changed |= isLeft
            ? joinRow(true, t, values, left, right, watermark, nullKey, out)
            : joinRow(false, t, values, right, left, watermark, nullKey, out);
      }
    }
    if (emptyWindow) return out.iterator();
    if (left.isEmpty() && right.isEmpty()) {
      if (stored) state.remove();
    } else {
      if (changed) state.update(encode(left, right));
      long next = Long.MAX_VALUE; // the earliest expiry: > watermark, expired rows are gone
      if (!left.isEmpty()) next = left.get(0).time - lower;
      if (!right.isEmpty()) next = Math.min(next, right.get(0).time + upper);
      state.setTimeoutTimestamp(Math.max(1, next)); // Spark takes positive timestamps only
    }
    return out.iterator();
  }

  private Row padded(boolean isLeft, Object[] values) {
    return isLeft
        ? sides.output(Wire.INSERT, values, null)
        : sides.output(Wire.INSERT, null, values);
  }

  /**
   * Joins a new row with the other side's cache, then caches it or (late) pads it. Returns
   * whether the state changed.
   */
  private boolean joinRow(boolean isLeft, long t, Object[] row, List<Cached> mine,
      List<Cached> other, long watermark, boolean nullKey, List<Row> out) {
    boolean myOuter = isLeft ? lout : rout;
    boolean otherOuter = isLeft ? rout : lout;
    boolean matched = false;
    boolean changed = false;
    if (!nullKey && !other.isEmpty()) {
      // left row: rt in [lt - upper, lt - lower]; right row: lt in [rt + lower, rt + upper]
      long from = isLeft ? t - upper : t + lower;
      long to = isLeft ? t - lower : t + upper;
      int hi = Bisect.right(other, to);
      for (int i = Bisect.left(other, from); i < hi; i++) {
        Cached e = other.get(i);
        Object[] l = isLeft ? row : e.row;
        Object[] r = isLeft ? e.row : row;
        if (sides.matches(l, r)) {
          out.add(sides.output(Wire.INSERT, l, r));
          matched = true;
          if (otherOuter && !e.matched) {
            e.matched = true;
            changed = true;
          }
        }
      }
    }
    long until = isLeft ? t - lower : t + upper; // rows of the other side may match until then
    if (watermark < until && (myOuter || !nullKey)) {
      mine.add(Bisect.right(mine, t), new Cached(t, row, matched));
      return true;
    }
    if (myOuter && !matched) out.add(padded(isLeft, row));
    return changed;
  }

  /** Drops the cached rows whose window the watermark passed, padding unmatched outer rows. */
  private boolean expire(List<Cached> left, List<Cached> right, long watermark, List<Row> out) {
    int n = Bisect.left(left, watermark + lower); // lt - lower < W
    int m = Bisect.left(right, watermark - upper); // rt + upper < W
    if (n > 0) {
      if (lout) for (Cached e : left.subList(0, n)) if (!e.matched) out.add(padded(true, e.row));
      left.subList(0, n).clear();
    }
    if (m > 0) {
      if (rout) {
        for (Cached e : right.subList(0, m)) if (!e.matched) out.add(padded(false, e.row));
      }
      right.subList(0, m).clear();
    }
    return n > 0 || m > 0;
  }

  // -- the state value: byte FORMAT; 2 x (varint n; n x (zigzag time, byte matched, row)) ------

  private byte[] encode(List<Cached> left, List<Cached> right) {
    RowCodec.Out out = new RowCodec.Out(64 + 32 * (left.size() + right.size()));
    out.raw(FORMAT, 1);
    write(out, left, sides.left);
    write(out, right, sides.right);
    return out.bytes();
  }

  private static void write(RowCodec.Out out, List<Cached> rows, RowCodec.RowFormat format) {
    out.varint(rows.size());
    for (Cached e : rows) {
      out.zigzag(e.time);
      out.raw(e.matched ? 1 : 0, 1);
      format.write(out, e.row);
    }
  }

  private void decode(byte[] bytes, List<Cached> left, List<Cached> right) {
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown interval state format");
    read(in, left, sides.left);
    read(in, right, sides.right);
  }

  private static void read(RowCodec.In in, List<Cached> rows, RowCodec.RowFormat format) {
    for (long i = 0, n = in.varint(); i < n; i++) {
      long t = in.zigzag();
      boolean matched = in.raw(1) != 0;
      rows.add(new Cached(t, format.read(in), matched));
    }
  }
}

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
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Flink's window Top-N and window deduplication ({@code WindowRankOperatorBuilder}, {@code
 * RowTimeWindowDeduplicateOperatorBuilder}) over the rows of a window TVF or a window
 * aggregation, insert-only, the JVM twin of {@code tests/models/window_rank.py}: per partition
 * key, each window's best {@code rank_end} rows are kept in order (the sort keys, ties in
 * arrival order; a keep-last deduplication keeps the later of two rows of the same time); an
 * event-time timer at {@code window_end - 1} ({@link TimerService}) emits the rows ranked
 * {@code rank_start..rank_end} ({@code +I}, with their row number when asked) once the
 * watermark reaches it, and drops the window. NULL sorts first ascending, last descending.
 *
 * <p>The union's {@code __t} is the row's {@code window_end} in epoch ms (a window's end names
 * it, as Flink keys its window state). Over a window TVF a row whose window has fired is late
 * and dropped. Over a window operator's rows (a window aggregation's, {@code fired_input}) a
 * window's rows all come in the one micro-batch that fires it upstream (one watermark per
 * batch fires it for every key): they are ranked and emitted at once, nothing kept (Spark may
 * hold this operator's watermark a batch behind its input's).
 *
 * <p>State value (beside the key's timers): {@code byte FORMAT; varint n; n x (zigzag end,
 * varint m, m x row)}, rows in rank order; timers (event time, {@code end - 1}, tag 0).
 */
final class WindowRank implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final byte FORMAT = 1;

  private final Spec spec;
  private final InputUnion union;
  private final int timeAt;
  private final StructType row;
  private final boolean java8Time;

  private transient RowCodec.RowFormat format; // built on first use in each executor

  /**
   * The {@code window_rank} section ({@code WindowRankSpec.wire_section()}): the input row's
   * fields, the sort keys (field index, ascending), the rank range, whether the row number is
   * output, whether ties keep the later row (keep-last deduplication) and whether the input's
   * windows have fired (a window operator's rows: ranked as they come).
   */
  record Spec(List<Specs.Field> input, int[] orderBy, boolean[] ascending, long rankStart,
      long rankEnd, boolean outputRank, boolean keepLast, boolean firedInput)
      implements java.io.Serializable {
    static Spec parse(Specs.Envelope envelope) {
      String where = "window_rank";
      JsonNode s = envelope.section(where);
      List<Specs.Field> input = Specs.Field.list(Specs.field(s, "input", where), where + ".input");
      JsonNode order = Specs.array(Specs.field(s, "order", where), where + ".order");
      int[] by = new int[order.size()];
      boolean[] asc = new boolean[order.size()];
      for (int i = 0; i < by.length; i++) {
        by[i] = (int) Specs.integer(order.get(i), "field", where + ".order");
        asc[i] = order.get(i).path("ascending").asBoolean(true);
        if (by[i] < 0 || by[i] >= input.size()) {
          throw new IllegalArgumentException(where + ".order: field " + by[i]
              + " is out of range for " + input.size() + " input fields");
        }
      }
      long start = Specs.integer(s, "rank_start", where);
      long end = Specs.integer(s, "rank_end", where);
      if (by.length == 0 || start < 1 || end < start) {
        throw new IllegalArgumentException(
            where + ": needs sort keys and a rank range 1 <= start <= end, got " + s);
      }
      return new Spec(input, by, asc, start, end, s.path("output_rank").asBoolean(true),
          s.path("keep_last").asBoolean(false), s.path("fired_input").asBoolean(false));
    }
  }

  private WindowRank(Spec spec, StructType input, StructType row, boolean java8Time) {
    this.spec = spec;
    this.union = InputUnion.inputs(input, 1);
    this.timeAt = input.fieldIndex(Wire.TIME);
    this.row = row;
    this.java8Time = java8Time;
  }

  /** The {@code window_rank} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    Spec spec = Spec.parse(request.spec());
    StructType row = request.struct(Wire.INPUT_PREFIX + 0);
    RowCodec.check(row);
    int width = row.fields().length;
    if (spec.input().size() != width) {
      throw new IllegalArgumentException("the input has " + width
          + " fields but the window rank spec declares " + spec.input().size());
    }
    if (!List.of(request.input().fieldNames()).contains(Wire.TIME)) {
      throw new IllegalArgumentException("a window rank needs the union's " + Wire.TIME
          + " column; its input has " + List.of(request.input().fieldNames()));
    }
    StructType output = request.output();
    int expected = 1 + width + (spec.outputRank() ? 1 : 0);
    if (output.fields().length != expected) {
      throw new IllegalArgumentException("the output schema has " + output.fields().length
          + " columns but the window rank gives " + expected);
    }
    for (int i = 0; i < width; i++) {
      DataType from = row.fields()[i].dataType();
      DataType to = output.fields()[1 + i].dataType();
      if (!DataType.equalsStructurally(from, to, true)) {
        throw new IllegalArgumentException("output column `" + output.fields()[1 + i].name()
            + "` is " + to.sql() + " but the input field it copies is " + from.sql());
      }
    }
    if (spec.outputRank() && !output.fields()[width + 1].dataType().equals(DataTypes.LongType)) {
      throw new IllegalArgumentException("the row number's output column must be BIGINT");
    }
    return new Operator(new WindowRank(spec, request.input(), row, request.java8Time()), output,
        GroupStateTimeout.EventTimeTimeout());
  }

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    if (format == null) format = new RowCodec.RowFormat(row, java8Time);
    if (spec.firedInput()) return rankAtOnce(rows);
    long watermark = state.getCurrentWatermarkMs(); // fired: end - 1 <= watermark
    TimerService timers = TimerService.load(state);
    TreeMap<Long, List<Object[]>> windows = decode(timers.value());
    if (!state.hasTimedOut()) {
      for (Row r : union.ordered(rows)) {
        byte kind = union.kind(r);
        if (kind != Wire.INSERT) throw Rows.notInsertOnly("window rank", kind);
        if (r.isNullAt(timeAt)) continue; // no window: the TVF assigns every row one
        long end = r.getLong(timeAt);
        if (end - 1 <= watermark) continue; // its window has fired: late, dropped
        insert(windows.computeIfAbsent(end, x -> new ArrayList<>()),
            union.fields(r, format.width));
        timers.register(TimerService.Domain.EVENT_TIME, end - 1, 0);
      }
    }
    List<Row> out = new ArrayList<>();
    for (TimerService.Timer t = timers.pollDue(watermark, Long.MIN_VALUE); t != null;
        t = timers.pollDue(watermark, Long.MIN_VALUE)) {
      List<Object[]> ranked = windows.remove(t.time() + 1);
      if (ranked != null) emit(ranked, out);
    }
    timers.value(windows.isEmpty() ? null : encode(windows));
    timers.save(state, TimerService.Domain.EVENT_TIME);
    return out.isEmpty() ? Collections.emptyIterator() : out.iterator();
  }

  /** A fired input's rows: each window's ranked and emitted now (window ends in order). */
  private Iterator<Row> rankAtOnce(Iterator<Row> rows) {
    TreeMap<Long, List<Object[]>> windows = new TreeMap<>();
    for (Row r : union.ordered(rows)) {
      byte kind = union.kind(r);
      if (kind != Wire.INSERT) throw Rows.notInsertOnly("window rank", kind);
      if (r.isNullAt(timeAt)) continue;
      insert(windows.computeIfAbsent(r.getLong(timeAt), x -> new ArrayList<>()),
          union.fields(r, format.width));
    }
    List<Row> out = new ArrayList<>();
    for (List<Object[]> ranked : windows.values()) emit(ranked, out);
    return out.isEmpty() ? Collections.emptyIterator() : out.iterator();
  }

  /** A window's rows ranked {@code rank_start..rank_end}, with their row numbers. */
  private void emit(List<Object[]> ranked, List<Row> out) {
    for (int i = (int) spec.rankStart() - 1; i < ranked.size(); i++) {
      out.add(output(ranked.get(i), i + 1));
    }
  }

  /**
   * Put {@code r} among a window's ranked rows after those it does not sort before (before
   * them in a keep-last deduplication: the later row of a time wins), keeping the best {@code
   * rank_end}.
   */
  private void insert(List<Object[]> ranked, Object[] r) {
    int lo = 0;
    int hi = ranked.size();
    while (lo < hi) { // the first row that sorts after r (keep-last: not before r)
      int mid = (lo + hi) >>> 1;
      int c = compare(ranked.get(mid), r);
      if (c < 0 || (c == 0 && !spec.keepLast())) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo >= spec.rankEnd()) return; // below the kept ranks
    ranked.add(lo, r);
    if (ranked.size() > spec.rankEnd()) ranked.remove(ranked.size() - 1);
  }

  /** The sort keys' order of two rows; NULL is the smallest value (first ascending). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private int compare(Object[] a, Object[] b) {
    for (int i = 0; i < spec.orderBy().length; i++) {
      Object x = a[spec.orderBy()[i]];
      Object y = b[spec.orderBy()[i]];
      int c;
      if (x == null || y == null) {
        c = x == null ? (y == null ? 0 : -1) : 1;
      } else {
        c = AggFunctions.compare(x, y);
      }
      if (c != 0) return spec.ascending()[i] ? c : -c;
    }
    return 0;
  }

  private Row output(Object[] r, long rank) {
    int width = r.length;
    Object[] values = new Object[1 + width + (spec.outputRank() ? 1 : 0)];
    values[0] = Wire.INSERT;
    System.arraycopy(r, 0, values, 1, width);
    if (spec.outputRank()) values[width + 1] = rank;
    return RowFactory.create(values);
  }

  // -- the state value -------------------------------------------------------------------------

  private byte[] encode(TreeMap<Long, List<Object[]>> windows) {
    RowCodec.Out out = new RowCodec.Out(16 + 32 * windows.size());
    out.raw(FORMAT, 1);
    out.varint(windows.size());
    for (Map.Entry<Long, List<Object[]>> e : windows.entrySet()) {
      out.zigzag(e.getKey());
      out.varint(e.getValue().size());
      for (Object[] r : e.getValue()) format.write(out, r);
    }
    return out.bytes();
  }

  private TreeMap<Long, List<Object[]>> decode(byte[] bytes) {
    TreeMap<Long, List<Object[]>> windows = new TreeMap<>();
    if (bytes == null) return windows;
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown window rank state format");
    for (long i = 0, n = in.varint(); i < n; i++) {
      List<Object[]> ranked = new ArrayList<>();
      windows.put(in.zigzag(), ranked);
      for (long j = 0, m = in.varint(); j < m; j++) ranked.add(format.read(in));
    }
    return windows;
  }
}

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
import org.apache.spark.sql.types.StructType;

/**
 * Flink's window aggregation over a window TVF (TUMBLE, HOP, CUMULATE; Flink's
 * SlicingWindowOperator with a window AggsHandle), over an insert-only input, the JVM twin of
 * {@code tests/models/window_aggregate.py}: each row of a key is assigned its windows (Flink's
 * assigners, offset included) and accumulated into each window's {@link AggsHandle.Accs}; an
 * event-time timer at {@code window_end - 1} ({@link TimerService}) emits the window's one
 * {@code +I} row once the watermark reaches it (Flink's {@code isWindowFired}) and drops the
 * window's state. A row is late for a window that has fired: it counts in its windows that
 * have not (HOP, CUMULATE), and is dropped when all have. A row without a time is dropped.
 *
 * <p>No slicing: a row is accumulated once per window it belongs to, where Flink accumulates
 * it once into a slice that its windows merge; the answers are the same.
 *
 * <p>SESSION windows (Flink's merging window set, the grouping key being the session's
 * partition): each row's window {@code [ts, ts + gap)} merges with the key's windows it
 * touches, see {@link #sessions}.
 *
 * <p>State value (beside the key's timers): {@code varint n; n x (zigzag start, zigzag end,
 * the window's accumulators as bytes)}; timers (event time, {@code end - 1}, tag {@code
 * start}).
 */
final class WindowAggregate implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;

  private final Spec spec;
  private final AggsHandle aggs;
  private final InputUnion union;
  private final int timeAt;
  private final int[] layout; // per output column: key i (>= 0), or START/END/TIME/agg
  private final boolean java8Time;

  private static final int START = -1;
  private static final int END = -2;
  private static final int TIME = -3;
  private static final int AGG = -1000; // AGG - i: the i-th call's result

  /**
   * The {@code window_aggregate} section ({@code WindowAggregateSpec.wire_section()}): the
   * input row's fields (the keys first), the number of keys, the calls, the window (kind,
   * size, step, offset in ms; step -1 for TUMBLE and SESSION, whose size is its gap) and the output columns ({@code key<i>},
   * {@code agg<i>}, {@code window_start}, {@code window_end}, {@code window_time}).
   */
  record Spec(List<Specs.Field> input, int keyCount, List<Specs.AggCall> aggs, String kind,
      long size, long step, long offset, List<String> columns, boolean proctime)
      implements java.io.Serializable {
    static Spec parse(Specs.Envelope envelope) {
      String where = "window_aggregate";
      JsonNode s = envelope.section(where);
      JsonNode w = Specs.field(s, "window", where);
      Spec spec = new Spec(Specs.Field.list(Specs.field(s, "input", where), where + ".input"),
          (int) Specs.integer(s, "key_count", where), Specs.AggCall.list(s, where),
          Specs.text(w, "kind", where + ".window"), Specs.integer(w, "size_ms", where + ".window"),
          Specs.optionalLong(w, "step_ms", -1), Specs.optionalLong(w, "offset_ms", 0),
          Specs.strings(Specs.field(s, "columns", where), where + ".columns"),
          w.path("proctime").asBoolean(false));
      boolean stepless = spec.kind.equals("tumble") || spec.kind.equals("session");
      if (!List.of("tumble", "hop", "cumulate", "session").contains(spec.kind)) {
        throw new IllegalArgumentException("unknown window kind " + spec.kind);
      }
      if (spec.size <= 0 || stepless != (spec.step < 0) || spec.step == 0
          || (!stepless && spec.size % spec.step != 0)
          || (spec.kind.equals("session") && (spec.offset != 0 || spec.proctime))) {
        throw new IllegalArgumentException("bad window: " + w);
      }
      return spec;
    }
  }

  private WindowAggregate(Spec spec, AggsHandle aggs, int[] layout, StructType input,
      boolean java8Time) {
    this.spec = spec;
    this.aggs = aggs;
    this.layout = layout;
    this.union = InputUnion.inputs(input, 1);
    // a proctime window reads no time: its union has no __t
    this.timeAt = List.of(input.fieldNames()).contains(Wire.TIME) ? input.fieldIndex(Wire.TIME) : -1;
    this.java8Time = java8Time;
  }

  /** The {@code window_aggregate} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    Spec spec = Spec.parse(request.spec());
    StructType row = request.struct(Wire.INPUT_PREFIX + 0);
    RowCodec.check(row);
    if (spec.input().size() != row.fields().length) {
      throw new IllegalArgumentException("the input has " + row.fields().length
          + " fields but the window aggregate spec declares " + spec.input().size());
    }
    if (!spec.proctime() && !List.of(request.input().fieldNames()).contains(Wire.TIME)) {
      throw new IllegalArgumentException("a window aggregate needs the union's " + Wire.TIME
          + " column; its input has " + List.of(request.input().fieldNames()));
    }
    StructType output = request.output();
    List<String> columns = spec.columns();
    if (output.fields().length != 1 + columns.size()) {
      throw new IllegalArgumentException("the output schema has " + output.fields().length
          + " columns but the window aggregate gives 1 + " + columns.size());
    }
    int[] layout = new int[columns.size()];
    DataType[] results = new DataType[spec.aggs().size()];
    for (int c = 0; c < layout.length; c++) {
      String name = columns.get(c);
      layout[c] = switch (name) {
        case "window_start" -> START;
        case "window_end" -> END;
        case "window_time" -> TIME;
        default -> {
          int i = Integer.parseInt(name.substring(3));
          if (name.startsWith("key") && i < spec.keyCount()) yield i;
          if (!name.startsWith("agg") || i >= results.length) {
            throw new IllegalArgumentException("unknown output column " + name);
          }
          results[i] = output.fields()[1 + c].dataType();
          yield AGG - i;
        }
      };
    }
    AggsHandle aggs = AggsHandle.of(row, spec.aggs(), results, false, request.java8Time());
    return new Operator(new WindowAggregate(spec, aggs, layout, request.input(),
        request.java8Time()), output, spec.proctime() ? GroupStateTimeout.ProcessingTimeTimeout()
        : GroupStateTimeout.EventTimeTimeout());
  }

  // -- window assignment (Flink's assigners) ---------------------------------------------------

  /** Flink's {@code TimeWindow.getWindowStartWithOffset}. */
  private long start(long ts, long size) {
    return ts - Math.floorMod(ts - spec.offset(), size);
  }

  /** The windows (start, end) that hold an event at {@code ts}. */
  List<long[]> assign(long ts) {
    List<long[]> out = new ArrayList<>();
    switch (spec.kind()) {
      case "tumble" -> {
        long start = start(ts, spec.size());
        out.add(new long[] {start, start + spec.size()});
      }
      case "hop" -> {
        for (long start = start(ts, spec.step()); start > ts - spec.size(); start -= spec.step()) {
          out.add(new long[] {start, start + spec.size()});
        }
      }
      default -> { // cumulate: one start, ends step by step up to the max size
        long start = start(ts, spec.size());
        for (long end = start + ((ts - start) / spec.step() + 1) * spec.step();
            end <= start + spec.size(); end += spec.step()) {
          out.add(new long[] {start, end});
        }
      }
    }
    return out;
  }

  // -- the function ----------------------------------------------------------------------------

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    aggs.init();
    // fired: end - 1 <= watermark (Spark refuses the watermark to a processing-time query
    // without one)
    long watermark = spec.proctime() ? -1 : state.getCurrentWatermarkMs();
    TimerService timers = TimerService.load(state);
    TreeMap<Window, AggsHandle.Accs> windows = decode(timers.value());
    int width = aggs.row().fields().length;
    if (spec.kind().equals("session")) return sessions(key, rows, state, timers, windows, width);
    if (spec.proctime()) return byClock(key, rows, state, timers, windows, width);
    if (!state.hasTimedOut()) {
      for (Row r : union.ordered(rows)) {
        byte kind = union.kind(r);
        if (kind != Wire.INSERT) throw Rows.notInsertOnly("window aggregate", kind);
        if (r.isNullAt(timeAt)) continue;
        Object[] values = null;
        for (long[] w : assign(r.getLong(timeAt))) {
          if (w[1] - 1 <= watermark) continue; // this window has fired: late for it
          if (values == null) values = union.fields(r, width);
          windows.computeIfAbsent(new Window(w[0], w[1]), x -> aggs.new Accs())
              .apply(values, true);
          timers.register(TimerService.Domain.EVENT_TIME, w[1] - 1, w[0]);
        }
      }
    }
    List<Row> out = new ArrayList<>();
    for (TimerService.Timer t = timers.pollDue(watermark, Long.MIN_VALUE); t != null;
        t = timers.pollDue(watermark, Long.MIN_VALUE)) {
      Window w = new Window(t.tag(), t.time() + 1);
      AggsHandle.Accs accs = windows.remove(w);
      if (accs != null && accs.rows > 0) out.add(output(key, w, accs.results()));
    }
    timers.value(windows.isEmpty() ? null : encode(windows));
    timers.save(state, TimerService.Domain.EVENT_TIME);
    return out.isEmpty() ? Collections.emptyIterator() : out.iterator();
  }

  /**
   * Session windows (Flink's MergingWindowSet with a session assigner): the windows the
   * watermark has passed fire first (a micro-batch's watermark comes before its rows, as in
   * Flink), then each row's window {@code [ts, ts + gap)} merges with every window of the key
   * it intersects (bounds included: {@code TimeWindow.intersects}), their accumulators merged
   * and their timers moved to the merged window's {@code end - 1}. A row that merges with no
   * window and whose own window has fired is late: dropped (Flink's {@code isWindowLate}).
   */
  private Iterator<Row> sessions(Row key, Iterator<Row> rows, GroupState<byte[]> state,
      TimerService timers, TreeMap<Window, AggsHandle.Accs> windows, int width) {
    long watermark = state.getCurrentWatermarkMs();
    List<Row> out = new ArrayList<>();
    fireDue(key, watermark, timers, windows, out);
    if (!state.hasTimedOut()) {
      for (Row r : union.ordered(rows)) {
        byte kind = union.kind(r);
        if (kind != Wire.INSERT) throw Rows.notInsertOnly("window aggregate", kind);
        if (r.isNullAt(timeAt)) continue;
        long ts = r.getLong(timeAt);
        Window merged = new Window(ts, ts + spec.size());
        List<Window> overlapping = new ArrayList<>();
        for (Window w : windows.keySet()) {
          if (w.start() <= merged.end() && w.end() >= merged.start()) overlapping.add(w);
        }
        if (overlapping.isEmpty() && merged.end() - 1 <= watermark) continue; // late
        AggsHandle.Accs accs = aggs.new Accs();
        for (Window w : overlapping) {
          merged = new Window(Math.min(merged.start(), w.start()), Math.max(merged.end(), w.end()));
          accs.merge(windows.remove(w));
          timers.delete(TimerService.Domain.EVENT_TIME, w.end() - 1, w.start());
        }
        accs.apply(union.fields(r, width), true);
        windows.put(merged, accs);
        timers.register(TimerService.Domain.EVENT_TIME, merged.end() - 1, merged.start());
      }
    }
    fireDue(key, watermark, timers, windows, out); // (a merged window is never due)
    timers.value(windows.isEmpty() ? null : encode(windows));
    timers.save(state, TimerService.Domain.EVENT_TIME);
    return out.isEmpty() ? Collections.emptyIterator() : out.iterator();
  }

  /**
   * Processing-time windows (Flink's proctime window aggregation): each row is assigned the
   * windows of the micro-batch's processing time (the server's clock when the batch started;
   * the row's time column is not read), with a processing-time timer at {@code end - 1}; the
   * windows the clock has reached fire, in the key's next call (its rows, or its
   * processing-time timeout). No row is late.
   */
  private Iterator<Row> byClock(Row key, Iterator<Row> rows, GroupState<byte[]> state,
      TimerService timers, TreeMap<Window, AggsHandle.Accs> windows, int width) {
    long now = state.getCurrentProcessingTimeMs();
    if (!state.hasTimedOut()) {
      for (Row r : union.ordered(rows)) {
        byte kind = union.kind(r);
        if (kind != Wire.INSERT) throw Rows.notInsertOnly("window aggregate", kind);
        Object[] values = union.fields(r, width);
        for (long[] w : assign(now)) {
          windows.computeIfAbsent(new Window(w[0], w[1]), x -> aggs.new Accs())
              .apply(values, true);
          timers.register(TimerService.Domain.PROCESSING_TIME, w[1] - 1, w[0]);
        }
      }
    }
    List<Row> out = new ArrayList<>();
    for (TimerService.Timer t = timers.pollDue(-1, now); t != null; t = timers.pollDue(-1, now)) {
      Window w = new Window(t.tag(), t.time() + 1);
      AggsHandle.Accs accs = windows.remove(w);
      if (accs != null && accs.rows > 0) out.add(output(key, w, accs.results()));
    }
    timers.value(windows.isEmpty() ? null : encode(windows));
    timers.save(state, TimerService.Domain.PROCESSING_TIME);
    return out.isEmpty() ? Collections.emptyIterator() : out.iterator();
  }

  private void fireDue(Row key, long watermark, TimerService timers,
      TreeMap<Window, AggsHandle.Accs> windows, List<Row> out) {
    for (TimerService.Timer t = timers.pollDue(watermark, Long.MIN_VALUE); t != null;
        t = timers.pollDue(watermark, Long.MIN_VALUE)) {
      Window w = new Window(t.tag(), t.time() + 1);
      AggsHandle.Accs accs = windows.remove(w);
      if (accs != null && accs.rows > 0) out.add(output(key, w, accs.results()));
    }
  }

  /** A window of a key: its start and end (ms). */
  record Window(long start, long end) implements Comparable<Window> {
    @Override
    public int compareTo(Window o) {
      int c = Long.compare(end, o.end);
      return c != 0 ? c : Long.compare(start, o.start);
    }
  }

  private Row output(Row key, Window w, Object[] results) {
    Object[] values = new Object[1 + layout.length];
    values[0] = Wire.INSERT;
    for (int c = 0; c < layout.length; c++) {
      int from = layout[c];
      values[1 + c] = switch (from) {
        case START -> timestamp(w.start());
        case END -> timestamp(w.end());
        case TIME -> timestamp(w.end() - 1);
        default -> from >= 0 ? key.get(from) : results[AGG - from];
      };
    }
    return RowFactory.create(values);
  }

  private Object timestamp(long ms) {
    return java8Time ? java.time.Instant.ofEpochMilli(ms) : new java.sql.Timestamp(ms);
  }

  // -- the state value -------------------------------------------------------------------------

  private byte[] encode(TreeMap<Window, AggsHandle.Accs> windows) {
    RowCodec.Out out = new RowCodec.Out(16 + 32 * windows.size());
    out.varint(windows.size());
    for (Map.Entry<Window, AggsHandle.Accs> e : windows.entrySet()) {
      out.zigzag(e.getKey().start());
      out.zigzag(e.getKey().end());
      out.bytes(aggs.encode(e.getValue()));
    }
    return out.bytes();
  }

  private TreeMap<Window, AggsHandle.Accs> decode(byte[] bytes) {
    TreeMap<Window, AggsHandle.Accs> windows = new TreeMap<>();
    if (bytes == null) return windows;
    RowCodec.In in = new RowCodec.In(bytes);
    for (long i = 0, n = in.varint(); i < n; i++) {
      Window w = new Window(in.zigzag(), in.zigzag());
      windows.put(w, aggs.decode(in.bytes()));
    }
    return windows;
  }
}

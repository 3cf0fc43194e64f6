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
 * SlicingWindowOperator with a window AggsHandle), the JVM twin of {@code
 * tests/models/window_aggregate.py}. Slicing, as Flink's {@code SliceAssigner}s: each row of a
 * key is accumulated once, into its slice's {@link AggsHandle.Accs} (TUMBLE: its window; HOP:
 * its slice of {@code gcd(size, slide)} = the slide, the size being a multiple of it; CUMULATE:
 * its step), and a window fires by merging the accumulators of the slices it spans ({@code
 * SliceSharedAssigner.mergeSlices}). An event-time timer at {@code window_end - 1} ({@link
 * TimerService}) emits the window's one {@code +I} row once the watermark reaches it (Flink's
 * {@code isWindowFired}); firing a window registers the next window of its slices (HOP: while
 * one of them holds rows; CUMULATE: up to the max size) and frees the slices no later window
 * reads. A row whose slice has fired is late: dropped when the last window holding its slice
 * has fired too, else accumulated into its slice with a timer at its first window not yet
 * fired. A row without a time is dropped.
 *
 * <p>Two-phase ({@code two_phase}, Flink's GlobalWindowAggregate): the input rows are partial
 * accumulators ({@code __acc}) that {@link LocalGroupAggregate} folded per task, key and slice
 * before the shuffle (their {@code __t} is the slice's last millisecond); each is merged into
 * its slice as a row is accumulated. A changelog input ({@code retractions}): {@code -U/-D}
 * rows retract from their slice; a window whose rows all retracted emits nothing.
 *
 * <p>SESSION windows (Flink's merging window set, the grouping key being the session's
 * partition): each row's window {@code [ts, ts + gap)} merges with the key's windows it
 * touches, see {@link #sessions}. Processing-time windows keep one accumulator per window
 * ({@link #byClock}).
 *
 * <p>State value (beside the key's timers): {@code varint n; n x (zigzag start, zigzag end,
 * the accumulators as bytes)}, per slice (event-time TUMBLE, HOP, CUMULATE: {@code start =
 * end - slice}) or per window (SESSION, processing time); timers (end - 1, tag: the window's
 * start).
 */
final class WindowAggregate implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;

  private final Spec spec;
  private final AggsHandle aggs;
  private final InputUnion union;
  private final int timeAt;
  private final int[] layout; // per output column: key i (>= 0), or START/END/TIME/agg
  private final boolean java8Time;
  private final long slice; // a slice's length (and the interval between window ends)
  private final int accAt; // two-phase: the __acc column of the input; -1: none

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
      long size, long step, long offset, List<String> columns, boolean proctime,
      boolean twoPhase, boolean retractions)
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
          w.path("proctime").asBoolean(false), s.path("two_phase").asBoolean(false),
          s.path("retractions").asBoolean(false));
      boolean stepless = spec.kind.equals("tumble") || spec.kind.equals("session");
      if (!List.of("tumble", "hop", "cumulate", "session").contains(spec.kind)) {
        throw new IllegalArgumentException("unknown window kind " + spec.kind);
      }
      if (spec.size <= 0 || stepless != (spec.step < 0) || spec.step == 0
          || (!stepless && spec.size % spec.step != 0)
          || (spec.kind.equals("session") && (spec.offset != 0 || spec.proctime))) {
        throw new IllegalArgumentException("bad window: " + w);
      }
      if ((spec.twoPhase || spec.retractions) && (spec.proctime || spec.kind.equals("session"))) {
        throw new IllegalArgumentException("two phases and changelog input are for event-time "
            + "TUMBLE, HOP and CUMULATE windows only: " + s);
      }
      return spec;
    }
  }

  private WindowAggregate(Spec spec, AggsHandle aggs, int[] layout, StructType input,
      boolean java8Time) {
    this.spec = spec;
    this.slice = spec.kind().equals("tumble") ? spec.size() : spec.step();
    this.accAt = spec.twoPhase() ? input.fieldIndex(GroupAggregate.ACC) : -1;
    this.aggs = aggs;
    this.layout = layout;
    this.union = InputUnion.inputs(input, 1);
    // a proctime window reads no time: its union has no __t
    this.timeAt = List.of(input.fieldNames()).contains(Wire.TIME) ? input.fieldIndex(Wire.TIME) : -1;
    this.java8Time = java8Time;
  }

  /** The {@code window_aggregate} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    WindowAggregate fn = of(request, false);
    return new Operator(fn, request.output(), fn.spec.proctime()
        ? GroupStateTimeout.ProcessingTimeTimeout() : GroupStateTimeout.EventTimeTimeout());
  }

  /**
   * The function for a request, its spec checked against the union and the output; {@code
   * local}: for the local phase of a two-phase window aggregation, over the operator's input
   * rows (no {@code __acc} yet).
   */
  static WindowAggregate of(Operator.Request request, boolean local) {
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
    if (!local && spec.twoPhase()
        && !List.of(request.input().fieldNames()).contains(GroupAggregate.ACC)) {
      throw new IllegalArgumentException("a two-phase window aggregation reads the partial "
          + "accumulators of its local phase (" + GroupAggregate.ACC + "); its input has "
          + List.of(request.input().fieldNames()));
    }
    AggsHandle aggs = AggsHandle.of(row, spec.aggs(), results, spec.retractions(),
        request.java8Time());
    Spec own = local ? withoutTwoPhase(spec) : spec;
    return new WindowAggregate(own, aggs, layout, request.input(), request.java8Time());
  }

  private static Spec withoutTwoPhase(Spec s) {
    return new Spec(s.input(), s.keyCount(), s.aggs(), s.kind(), s.size(), s.step(), s.offset(),
        s.columns(), s.proctime(), false, s.retractions());
  }

  /** The accumulators of the calls (what the local phase folds into). */
  AggsHandle aggs() {
    return aggs;
  }

  /** The number of group keys. */
  int keyCount() {
    return spec.keyCount();
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

  // -- slices (Flink's SliceAssigners) -----------------------------------------------------------

  /** The end of the slice that holds an event at {@code ts}. */
  long sliceEnd(long ts) {
    return start(ts, slice) + slice;
  }

  /** The start of the window that ends at {@code windowEnd}. */
  private long windowStart(long windowEnd) {
    return spec.kind().equals("cumulate") ? start(windowEnd - 1, spec.size())
        : windowEnd - spec.size();
  }

  /** The end of the last window that holds the slice ending at {@code sliceEnd}. */
  private long lastWindowEnd(long sliceEnd) {
    return switch (spec.kind()) {
      case "hop" -> sliceEnd - slice + spec.size();
      case "cumulate" -> start(sliceEnd - 1, spec.size()) + spec.size();
      default -> sliceEnd;
    };
  }

  private static boolean fired(long windowEnd, long watermark) {
    return windowEnd - 1 <= watermark;
  }

  private static Window slice(long end, long length) {
    return new Window(end - length, end);
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
    return slices(key, rows, state, watermark, timers, windows, width);
  }

  /**
   * Event-time TUMBLE, HOP and CUMULATE windows over slices ({@code slices}: the key's slices
   * by their bounds): the windows the watermark has passed fire first (a micro-batch's
   * watermark comes before its rows, as in Flink), then each row (a two-phase input: each
   * partial) goes into its slice.
   */
  private Iterator<Row> slices(Row key, Iterator<Row> rows, GroupState<byte[]> state,
      long watermark, TimerService timers, TreeMap<Window, AggsHandle.Accs> slices, int width) {
    List<Row> out = new ArrayList<>();
    for (TimerService.Timer t = timers.pollDue(watermark, Long.MIN_VALUE); t != null;
        t = timers.pollDue(watermark, Long.MIN_VALUE)) {
      fire(key, t.time() + 1, timers, slices, out);
    }
    if (!state.hasTimedOut()) {
      // partials merge in any order; rows keep their changelog order
      List<Row> input = new ArrayList<>();
      if (accAt >= 0) rows.forEachRemaining(input::add);
      for (Row r : accAt >= 0 ? input : union.ordered(rows)) {
        if (accAt < 0 && !spec.retractions() && union.kind(r) != Wire.INSERT) {
          throw Rows.notInsertOnly("window aggregate", union.kind(r));
        }
        if (r.isNullAt(timeAt)) continue;
        long end = sliceEnd(r.getLong(timeAt));
        long first = end; // the first window of the slice not fired yet
        if (fired(end, watermark)) { // late for the slice's first window
          if (fired(lastWindowEnd(end), watermark)) continue; // and its last: dropped
          while (fired(first, watermark)) first += slice;
        }
        AggsHandle.Accs accs = slices.computeIfAbsent(slice(end, slice), x -> aggs.new Accs());
        if (accAt >= 0) {
          accs.merge(aggs.decode((byte[]) r.get(accAt)));
        } else {
          accs.apply(union.fields(r, width), Rows.accumulates(union.kind(r)));
        }
        timers.register(TimerService.Domain.EVENT_TIME, first - 1, windowStart(first));
      }
    }
    if (timers.list(TimerService.Domain.EVENT_TIME).isEmpty()) slices.clear();
    timers.value(slices.isEmpty() ? null : encode(slices));
    timers.save(state, TimerService.Domain.EVENT_TIME);
    return out.isEmpty() ? Collections.emptyIterator() : out.iterator();
  }

  /**
   * Fires the window ending at {@code windowEnd}: its slices' accumulators merged (one slice:
   * its own), its row emitted unless no row is left in it; then the next window of its slices
   * is registered (HOP: when one of that window's slices is there; CUMULATE: up to the max
   * size) and the slices no later window reads are freed.
   */
  private void fire(Row key, long windowEnd, TimerService timers,
      TreeMap<Window, AggsHandle.Accs> slices, List<Row> out) {
    long start = windowStart(windowEnd);
    List<AggsHandle.Accs> parts = new ArrayList<>();
    for (long s = start + slice; s <= windowEnd; s += slice) {
      AggsHandle.Accs a = slices.get(slice(s, slice));
      if (a != null) parts.add(a);
    }
    AggsHandle.Accs window = parts.size() == 1 ? parts.get(0) : null;
    if (parts.size() > 1) { // merged into a fresh accumulator: the slices stay as they are
      window = aggs.new Accs();
      for (AggsHandle.Accs a : parts) window.merge(a);
    }
    if (window != null && window.rows > 0) {
      out.add(output(key, new Window(start, windowEnd), window.results()));
    }
    long following = windowEnd + slice;
    switch (spec.kind()) {
      case "hop" -> {
        for (long s = following - spec.size() + slice; s <= following; s += slice) {
          if (slices.containsKey(slice(s, slice))) {
            timers.register(TimerService.Domain.EVENT_TIME, following - 1, windowStart(following));
            break;
          }
        }
        slices.remove(slice(windowEnd - spec.size() + slice, slice));
      }
      case "cumulate" -> {
        if (following <= start + spec.size()) {
          timers.register(TimerService.Domain.EVENT_TIME, following - 1, start);
        } else {
          for (long s = start + slice; s <= windowEnd; s += slice) slices.remove(slice(s, slice));
        }
      }
      default -> slices.remove(slice(windowEnd, slice));
    }
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

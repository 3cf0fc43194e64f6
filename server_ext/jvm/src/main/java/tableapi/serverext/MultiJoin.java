package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.types.StructType;

/**
 * The multi-way join (FLIP-516's StreamingMultiJoinOperator), a chain of INNER / LEFT joins on a
 * common key, the JVM twin of {@code tests/models/multi.py} (line for line): one binary
 * value per key holds every input's rows (row -> [count, time last written]); a call applies
 * the key's changes in {@code __seq} order and emits the difference of the key's join result
 * before and after them, {@code -D} then {@code +I}. With a state TTL, rows not written for that
 * long are dropped silently first, and a processing-time timeout clears a key that sees no more
 * rows (as the model's ValueState TTL, tests/models/multi.py).
 */
final class MultiJoin implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final byte FORMAT = 1;

  private final StructType[] inputs;
  private final boolean[] outer; // outer[i - 1]: input i is LEFT joined
  private final String[] conditions; // conditions[i - 1]: level i's tree (JSON), or null
  private final long ttlMs; // -1: none
  private final String timeZone;
  private final boolean java8Time;
  private final int width;
  private final InputUnion union;

  private transient RowCodec.RowFormat[] formats;
  private transient Condition[] matches;

  /** A stored row's copies and last write. */
  private static final class Entry {
    final Object[] row;
    long count;
    long written;

    Entry(Object[] row, long count, long written) {
      this.row = row;
      this.count = count;
      this.written = written;
    }
  }

  MultiJoin(StructType[] inputs, boolean[] outer, String[] conditions, long ttlMs,
      String timeZone, boolean java8Time, StructType input) {
    this.inputs = inputs;
    this.outer = outer;
    this.conditions = conditions;
    this.ttlMs = ttlMs;
    this.timeZone = timeZone;
    this.java8Time = java8Time;
    int w = 0;
    for (StructType s : inputs) w += s.fields().length;
    this.width = w;
    this.union = InputUnion.inputs(input, inputs.length);
  }

  /**
   * The {@code multi} section ({@code MultiJoinSpec.wire_section()}): each input's fields, the join kind of each input after the first
   * ({@code inner} or {@code left}), each level's condition tree as JSON (null: none), state
   * TTL (-1: none).
   */
  record Spec(List<List<Specs.Field>> inputs, List<String> kinds, List<String> conditions,
      long ttlMs) {
    static Spec parse(JsonNode s) {
      List<List<Specs.Field>> inputs = new ArrayList<>();
      for (JsonNode fields : Specs.array(Specs.field(s, "inputs", "multi"), "multi.inputs")) {
        inputs.add(Specs.Field.list(fields, "multi.inputs"));
      }
      List<String> conditions = new ArrayList<>();
      for (JsonNode c : Specs.array(Specs.field(s, "conditions", "multi"), "multi.conditions")) {
        conditions.add(c.isNull() ? null : c.toString());
      }
      List<String> kinds = Specs.strings(Specs.field(s, "kinds", "multi"), "multi.kinds");
      if (inputs.size() < 2 || kinds.size() != inputs.size() - 1
          || conditions.size() != inputs.size() - 1) {
        throw new IllegalArgumentException("a multi-way join has n >= 2 inputs and n - 1 kinds "
            + "and conditions; the spec has " + inputs.size() + ", " + kinds.size() + " and "
            + conditions.size());
      }
      return new Spec(List.copyOf(inputs), kinds, java.util.Collections.unmodifiableList(
          conditions), Specs.optionalLong(s, "ttl_ms", -1));
    }
  }


  /** The {@code multi} operator ({@link OperatorPlugin#OPERATORS}): N inputs {@code __in0..}. */
  static Operator create(Operator.Request request) {
    Spec multi = Spec.parse(request.spec().section("multi"));
    int n = multi.inputs().size();
    StructType[] inputs = new StructType[n];
    int width = 0;
    for (int i = 0; i < n; i++) {
      inputs[i] = request.struct(Wire.INPUT_PREFIX + i);
      RowCodec.check(inputs[i]);
      if (multi.inputs().get(i).size() != inputs[i].fields().length) {
        throw new IllegalArgumentException("input " + i + " has " + inputs[i].fields().length
            + " fields but the spec declares " + multi.inputs().get(i).size());
      }
      width += inputs[i].fields().length;
    }
    boolean[] outer = new boolean[n - 1];
    String[] conditions = new String[n - 1];
    for (int i = 0; i < n - 1; i++) {
      outer[i] = multi.kinds().get(i).equals("left");
      conditions[i] = multi.conditions().get(i);
      Condition.compile(conditions[i], request.timeZone());
    }
    long ttlMs = multi.ttlMs();
    StructType output = request.output();
    if (output.fields().length != 1 + width) {
      throw new IllegalArgumentException("the output schema has " + output.fields().length
          + " columns but the multi-way join gives " + (1 + width));
    }
    MultiJoin fn = new MultiJoin(inputs, outer, conditions, ttlMs, request.timeZone(),
        request.java8Time(), request.input());
    return new Operator(fn, output, Operator.processingTimeoutIf(fn.hasTtl()));
  }

  private void init() {
    if (formats == null) {
      formats = new RowCodec.RowFormat[inputs.length];
      for (int i = 0; i < inputs.length; i++) {
        formats[i] = new RowCodec.RowFormat(inputs[i], java8Time);
      }
      matches = new Condition[conditions.length];
      for (int i = 0; i < conditions.length; i++) {
        matches[i] = Condition.compile(conditions[i], timeZone);
      }
    }
  }

  boolean hasTtl() {
    return ttlMs >= 0;
  }

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    init();
    if (state.hasTimedOut()) { // nothing written for the TTL: every row expired
      if (state.exists()) state.remove();
      return new ArrayList<Row>().iterator();
    }
    int n = inputs.length;
    long now = hasTtl() ? state.getCurrentProcessingTimeMs() : 0;
    boolean stored = state.exists();
    List<Map<Values.Tuple, Entry>> tables = new ArrayList<>(n);
    for (int i = 0; i < n; i++) tables.add(new LinkedHashMap<>());
    if (stored) decode(state.get(), tables);
    if (hasTtl()) {
      for (Map<Values.Tuple, Entry> t : tables) t.values().removeIf(e -> e.written + ttlMs <= now);
    }
    Map<Values.Tuple, long[]> before = result(tables);
    for (Row row : union.ordered(rows)) {
      int side = union.side(row);
      Object[] record = union.fields(row, formats[side].width);
      Values.Tuple k = new Values.Tuple(record);
      Map<Values.Tuple, Entry> table = tables.get(side);
      Entry e = table.get(k);
      byte kind = union.kind(row);
      if (Rows.accumulates(kind)) {
        if (e != null) {
          e.count += 1;
          e.written = now;
        } else {
          table.put(k, new Entry(record, 1, now));
        }
      } else if (e != null && e.count > 1) {
        e.count -= 1;
        e.written = now;
      } else { // the last copy, or a row not in state (e.g. expired): nothing to keep
        table.remove(k);
      }
    }
    Map<Values.Tuple, long[]> after = result(tables);
    boolean any = false;
    for (Map<Values.Tuple, Entry> t : tables) any |= !t.isEmpty();
    if (any) {
      state.update(encode(tables));
      if (hasTtl()) state.setTimeoutDuration(ttlMs);
    } else if (stored) {
      state.remove();
    }
    List<Row> out = new ArrayList<>();
    difference(before, after, Wire.DELETE, out);
    difference(after, before, Wire.INSERT, out);
    return out.iterator();
  }

  /** Python's {@code (a - b).elements()}: a's rows in a's order, each count(a) - count(b) times. */
  private void difference(
      Map<Values.Tuple, long[]> a, Map<Values.Tuple, long[]> b, byte kind, List<Row> out) {
    for (Map.Entry<Values.Tuple, long[]> e : a.entrySet()) {
      long[] other = b.get(e.getKey());
      long times = e.getValue()[0] - (other == null ? 0 : other[0]);
      for (long i = 0; i < times; i++) {
        Object[] values = new Object[1 + width];
        values[0] = kind;
        System.arraycopy(e.getKey().values, 0, values, 1, width);
        out.add(org.apache.spark.sql.RowFactory.create(values));
      }
    }
  }

  /** The key's join result: output tuple -> [count], in Python's Counter order. */
  private Map<Values.Tuple, long[]> result(List<Map<Values.Tuple, Entry>> tables) {
    Map<Values.Tuple, long[]> joined = new LinkedHashMap<>();
    for (Entry e : tables.get(0).values()) joined.put(new Values.Tuple(e.row), new long[] {e.count});
    int acc = inputs[0].fields().length;
    for (int i = 1; i < tables.size() && !joined.isEmpty(); i++) {
      Condition match = matches[i - 1];
      int w = inputs[i].fields().length;
      Map<Values.Tuple, long[]> step = new LinkedHashMap<>();
      for (Map.Entry<Values.Tuple, long[]> left : joined.entrySet()) {
        Object[] l = left.getKey().values;
        long lcount = left.getValue()[0];
        boolean found = false;
        for (Entry right : tables.get(i).values()) {
          if (match == null || match.test(l, right.row)) {
            add(step, concat(l, acc, right.row, w), lcount * right.count);
            found = true;
          }
        }
        if (outer[i - 1] && !found) add(step, concat(l, acc, null, w), lcount);
      }
      joined = step;
      acc += w;
    }
    return joined;
  }

  private static void add(Map<Values.Tuple, long[]> counts, Object[] row, long count) {
    counts.computeIfAbsent(new Values.Tuple(row), k -> new long[1])[0] += count;
  }

  private static Object[] concat(Object[] l, int lw, Object[] r, int rw) {
    Object[] out = new Object[lw + rw];
    System.arraycopy(l, 0, out, 0, lw);
    if (r != null) System.arraycopy(r, 0, out, lw, rw);
    return out;
  }

  // -- the state value: byte FORMAT; per input: varint n; n x (row, varint count, zigzag written)

  private byte[] encode(List<Map<Values.Tuple, Entry>> tables) {
    RowCodec.Out out = new RowCodec.Out(256);
    out.raw(FORMAT, 1);
    for (int i = 0; i < tables.size(); i++) {
      out.varint(tables.get(i).size());
      for (Entry e : tables.get(i).values()) {
        formats[i].write(out, e.row);
        out.varint(e.count);
        out.zigzag(e.written);
      }
    }
    return out.bytes();
  }

  private void decode(byte[] bytes, List<Map<Values.Tuple, Entry>> tables) {
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown multi-join state format");
    for (int i = 0; i < tables.size(); i++) {
      for (long j = 0, n = in.varint(); j < n; j++) {
        Object[] row = formats[i].read(in);
        long count = in.varint();
        long written = in.zigzag();
        tables.get(i).put(new Values.Tuple(row), new Entry(row, count, written));
      }
    }
  }
}

package tableapi.serverext;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Flink's streaming group aggregation ({@code GroupAggFunction}) over a changelog: one binary
 * state value per group key holds the key's accumulators; each input row (+I/+U accumulate,
 * -U/-D retract), in {@code __seq} order, updates them and emits the key's result as Flink
 * does: {@code +I} for the key's first result, {@code -U} (only where the consumers need it)
 * and {@code +U} when it changes, nothing when it does not (unless a state TTL is set: then
 * always, as Flink's), {@code -D} when the key's row count reaches zero, after which the key
 * starts afresh. A retraction for a key with no state is dropped.
 *
 * <p>Functions: the classes of {@link AggFunctions} (COUNT(*), COUNT, SUM, AVG, MIN, MAX, with
 * Flink's result types and NULL rules), one accumulator each per call, and the DISTINCT
 * forms (a map value -> count per distinct argument, shared by the calls on it: a call sees a
 * value when its count goes 0 -> 1 and loses it at 1 -> 0; NULLs are not counted).
 *
 * <p>Mini-batch ({@code mini_batch}, Flink's MiniBatchGroupAggFunction): a key's rows of one
 * micro-batch are folded, in bundles of at most {@code bundle_size} rows, before one result per
 * bundle is emitted (fewer -U/+U).
 *
 * <p>Two-phase ({@code two_phase}, Flink's MiniBatchGlobalGroupAggFunction): the input rows are
 * partial accumulators ({@code __acc}, this state value's format) that {@link
 * LocalGroupAggregate} folded per task before the shuffle; the operator merges a key's partials
 * of a bundle, then emits as the mini-batch does, with Flink's global rules: no state and a
 * merged row count of zero is no output, a row count that stays non-zero keeps the key (a
 * retraction for a key without state is not dropped, it is counted), and MIN/MAX and the
 * DISTINCT forms follow their value counts (a value counts while its count is positive).
 *
 * <p>State value: {@code byte FORMAT; zigzag rows; zigzag written_at_ms; per call its
 * accumulator; per distinct argument varint n, n x (value, zigzag count)}. State TTL: a key
 * not written for {@code ttl} is dropped silently (on load, or by a processing-time timeout).
 */
final class GroupAggregate implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final byte FORMAT = 1;

  /** One aggregate call: its function, argument field (-1: none) and distinct map (-1: none). */
  record Call(AggFunctions.Fn fn, int arg, boolean distinct, int distinctSlot)
      implements Serializable {}

  private final StructType row;
  private final int keyCount;
  private final Call[] calls;
  private final int[] distinctArgs; // the field of each distinct map
  private final boolean updateBefore;
  private final boolean miniBatch; // fold a key's rows of a micro-batch, then emit once
  private final int bundleSize; // mini-batch: the most rows one bundle folds
  private final boolean twoPhase; // the rows are partial accumulators (__acc) to merge
  private final boolean retractions; // the input may retract: MIN/MAX keep value counts
  private final long ttlMs; // -1: none
  private final boolean java8Time;
  private final InputUnion union;
  private final int accAt; // two-phase: the __acc column of the input; -1: none

  private transient RowCodec.RowFormat[] distinctFormats; // per distinct map: its values'

  GroupAggregate(StructType row, int keyCount, Call[] calls, int[] distinctArgs,
      boolean updateBefore, boolean miniBatch, int bundleSize, boolean twoPhase,
      boolean retractions, long ttlMs, boolean java8Time, StructType input) {
    this.row = row;
    this.keyCount = keyCount;
    this.calls = calls;
    this.distinctArgs = distinctArgs;
    this.updateBefore = updateBefore;
    this.miniBatch = miniBatch || twoPhase;
    this.bundleSize = bundleSize;
    this.twoPhase = twoPhase;
    this.retractions = retractions;
    this.ttlMs = ttlMs;
    this.java8Time = java8Time;
    this.union = InputUnion.inputs(input, 1);
    this.accAt = twoPhase ? input.fieldIndex(ACC) : -1;
  }

  /** The column of a partial accumulator in a two-phase aggregation's input (BINARY). */
  static final String ACC = "__acc";

  /** The {@code aggregate} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    GroupAggregate fn = of(request, false);
    return new Operator(fn, request.output(), Operator.processingTimeoutIf(fn.ttlMs >= 0));
  }

  /**
   * The function for a request, its spec checked against the union and the output; {@code
   * local}: for the local phase of a two-phase aggregation, over the operator's input rows.
   */
  static GroupAggregate of(Operator.Request request, boolean local) {
    Specs.Aggregate spec = request.spec().aggregate();
    StructType row = request.struct(Wire.INPUT_PREFIX + 0);
    RowCodec.check(row);
    if (spec.input().size() != row.fields().length) {
      throw new IllegalArgumentException("the input has " + row.fields().length
          + " fields but the aggregate spec declares " + spec.input().size());
    }
    int keyCount = spec.keyCount();
    StructType output = request.output();
    List<Specs.AggCall> aggs = spec.aggs();
    if (output.fields().length != 1 + keyCount + aggs.size()) {
      throw new IllegalArgumentException("the output schema has " + output.fields().length
          + " columns but the aggregate gives 1 + " + keyCount + " keys + " + aggs.size());
    }
    Call[] calls = new Call[aggs.size()];
    List<Integer> distinct = new ArrayList<>();
    for (int i = 0; i < calls.length; i++) {
      Specs.AggCall a = aggs.get(i);
      String name = a.function();
      int arg = a.arg();
      boolean isDistinct = a.distinct();
      boolean countStar = name.equals("count_star");
      if (countStar != (arg < 0) || arg >= row.fields().length) {
        throw new IllegalArgumentException("aggregate " + i + " ("
            + name.toUpperCase(java.util.Locale.ROOT) + ") has argument " + arg + " of "
            + row.fields().length + " input fields");
      }
      if (countStar && isDistinct) {
        throw new IllegalArgumentException("COUNT(*) has no DISTINCT form");
      }
      DataType argType = arg < 0 ? null : row.fields()[arg].dataType();
      DataType result = output.fields()[1 + keyCount + i].dataType();
      AggFunctions.Fn fn = AggFunctions.of(name, argType, result, spec.retractions(),
          request.java8Time(), i);
      int slot = -1;
      if (isDistinct) {
        slot = distinct.indexOf(arg);
        if (slot < 0) {
          slot = distinct.size();
          distinct.add(arg);
        }
      }
      calls[i] = new Call(fn, arg, isDistinct, slot);
    }
    boolean twoPhase = !local && spec.twoPhase();
    if (twoPhase && !List.of(request.input().fieldNames()).contains(ACC)) {
      throw new IllegalArgumentException("a two-phase aggregation reads the partial "
          + "accumulators of the local aggregation (" + ACC + "); its input has "
          + List.of(request.input().fieldNames()));
    }
    return new GroupAggregate(row, keyCount, calls,
        distinct.stream().mapToInt(Integer::intValue).toArray(),
        spec.updateBefore(), spec.miniBatch(), spec.bundleSize(), twoPhase, spec.retractions(),
        spec.ttlMs(), request.java8Time(), request.input());
  }

  void init() {
    if (distinctFormats == null) {
      RowCodec.RowFormat[] formats = new RowCodec.RowFormat[distinctArgs.length];
      for (int i = 0; i < distinctArgs.length; i++) {
        formats[i] = AggFunctions.valueFormat(row.fields()[distinctArgs[i]].dataType(), java8Time);
      }
      distinctFormats = formats;
    }
  }

  /** The input row type (the fields of {@code __in0}). */
  StructType row() {
    return row;
  }

  /**
   * The fields of an input row that {@link Accs#fold} reads (the calls' arguments and the
   * distinct maps' values), in field order: the local phase converts only these.
   */
  int[] foldedFields() {
    java.util.TreeSet<Integer> read = new java.util.TreeSet<>();
    for (Call c : calls) if (c.arg >= 0) read.add(c.arg);
    for (int f : distinctArgs) read.add(f);
    return read.stream().mapToInt(Integer::intValue).toArray();
  }

  boolean java8Time() {
    return java8Time;
  }

  int keyCount() {
    return keyCount;
  }

  int bundleSize() {
    return bundleSize;
  }

  /**
   * Whether every call folds as a count and an integral sum (COUNT(*), COUNT, and SUM or AVG of
   * an integral argument into an integral sum; no DISTINCT): the local phase then folds a key's
   * rows into {@link Counts}, primitive values, no boxed value per row.
   */
  boolean integral() {
    if (distinctArgs.length > 0) return false;
    for (Call c : calls) {
      if (c.distinct || !c.fn.integral()) return false;
    }
    return true;
  }

  /** The input row's field each call reads (-1: none, COUNT(*)). */
  int[] callArgs() {
    int[] args = new int[calls.length];
    for (int i = 0; i < calls.length; i++) {
      args[i] = calls[i].arg; // -1 for COUNT(*)
    }
    return args;
  }

  /** Whether call {@code i} sums its values (SUM, AVG), not only counts them. */
  boolean sums(int i) {
    return calls[i].fn.sums();
  }

  // -- one key's accumulators ------------------------------------------------------------------

  /**
   * A key's partial in the local phase when the calls are {@link #integral}: its rows, and per
   * call the count of its non-null values and their sum, as primitives; made {@link Accs} when
   * the bundle's partials go. Summing in a long then narrowing once gives what narrowing after
   * every step does (integral sums wrap the same either way).
   */
  final class Counts {
    long rows;
    final long[] counts = new long[calls.length];
    final long[] sums = new long[calls.length];
    final boolean[] summed = new boolean[calls.length]; // a value was folded: the sum is set

    /** These counts as a partial accumulator. */
    Accs accs() {
      Accs accs = new Accs();
      accs.rows = rows;
      for (int i = 0; i < calls.length; i++) {
        AggFunctions.Acc a = accs.accs[i];
        a.count = counts[i];
        if (summed[i]) a.value = ((AggFunctions.Sum) calls[i].fn).integralSum(sums[i]);
      }
      return accs;
    }
  }

  /** A key's state: its row count, last write, accumulators and distinct maps. */
  final class Accs {
    long rows;
    long written;
    final AggFunctions.Acc[] accs = new AggFunctions.Acc[calls.length];
    final List<Map<Values.Tuple, long[]>> distinct = new ArrayList<>(distinctArgs.length);

    Accs() {
      for (int i = 0; i < accs.length; i++) accs[i] = calls[i].fn.create();
      for (int i = 0; i < distinctArgs.length; i++) distinct.add(new LinkedHashMap<>());
    }

    /** Applies one input row: accumulates it, or retracts it. */
    void apply(Object[] values, boolean add) {
      rows += add ? 1 : -1;
      boolean[] seen = null; // per distinct map: does the value enter (add) or leave it
      if (distinctArgs.length > 0) {
        seen = new boolean[distinctArgs.length];
        for (int m = 0; m < distinctArgs.length; m++) {
          Object v = values[distinctArgs[m]];
          if (v == null) continue;
          Map<Values.Tuple, long[]> map = distinct.get(m);
          Values.Tuple k = new Values.Tuple(new Object[] {v});
          long[] n = map.get(k);
          if (add) {
            if (n == null) {
              map.put(k, new long[] {1});
              seen[m] = true;
            } else {
              n[0]++;
            }
          } else if (n != null) {
            if (--n[0] == 0) {
              map.remove(k);
              seen[m] = true;
            }
          }
        }
      }
      for (int i = 0; i < calls.length; i++) {
        Call c = calls[i];
        if (c.arg < 0) continue; // COUNT(*): the row count
        Object v = values[c.arg];
        if (v == null || (c.distinct && !seen[c.distinctSlot])) continue;
        applyCall(i, v, add);
      }
    }

    /**
     * Folds one input row into a partial accumulator (the local phase): counts and sums add up
     * with their signs, and the value counts of MIN/MAX and of the DISTINCT maps may go
     * negative (a retraction of a value another task added); the DISTINCT calls themselves are
     * left to {@link #merge}, which sees the whole count.
     */
    void fold(Object[] values, boolean add) {
      rows += add ? 1 : -1;
      for (int m = 0; m < distinctArgs.length; m++) {
        Object v = values[distinctArgs[m]];
        if (v != null) {
          AggFunctions.count(distinct.get(m), new Values.Tuple(new Object[] {v}), add ? 1 : -1);
        }
      }
      for (int i = 0; i < calls.length; i++) {
        Call c = calls[i];
        if (c.arg < 0 || c.distinct) continue;
        Object v = values[c.arg];
        if (v != null) c.fn.fold(accs[i], v, add);
      }
    }

    /**
     * Merges a partial accumulator into this one (the global phase, Flink's merge): counts and
     * sums add up; a value count of MIN/MAX or of a DISTINCT map adds up too, and a value
     * counts while its count is positive (a DISTINCT call sees it when its count turns
     * positive and loses it when the count falls to zero or below).
     */
    void merge(Accs o) {
      rows += o.rows;
      for (int m = 0; m < distinctArgs.length; m++) {
        Map<Values.Tuple, long[]> map = distinct.get(m);
        for (Map.Entry<Values.Tuple, long[]> e : o.distinct.get(m).entrySet()) {
          long[] n = map.get(e.getKey());
          long was = n == null ? 0 : n[0];
          long now = AggFunctions.count(map, e.getKey(), e.getValue()[0]);
          if ((was > 0) == (now > 0)) continue; // the value neither enters nor leaves
          Object v = e.getKey().values[0];
          for (int i = 0; i < calls.length; i++) {
            if (calls[i].distinct && calls[i].distinctSlot == m) applyCall(i, v, now > 0);
          }
        }
      }
      for (int i = 0; i < calls.length; i++) {
        Call c = calls[i];
        if (c.arg < 0 || c.distinct) continue;
        c.fn.merge(accs[i], o.accs[i]);
      }
    }

    /** One value of call {@code i} accumulated or retracted (not DISTINCT-checked). */
    private void applyCall(int i, Object v, boolean add) {
      if (add) {
        calls[i].fn.accumulate(accs[i], v);
      } else {
        calls[i].fn.retract(accs[i], v);
      }
    }

    /** The key's aggregate results, in call order. */
    Object[] results() {
      Object[] out = new Object[calls.length];
      for (int i = 0; i < calls.length; i++) out[i] = calls[i].fn.value(accs[i], rows);
      return out;
    }
  }

  // -- the function ----------------------------------------------------------------------------

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    init();
    if (state.hasTimedOut()) { // not written for the TTL: the key's state expired
      if (state.exists()) state.remove();
      return Collections.emptyIterator();
    }
    long now = ttlMs >= 0 ? state.getCurrentProcessingTimeMs() : 0;
    boolean stored = state.exists();
    Accs accs = stored ? decode(state.get()) : null;
    if (accs != null && ttlMs >= 0 && accs.written + ttlMs <= now) accs = null; // expired
    List<Row> out = new ArrayList<>();
    if (miniBatch) { // bundles of at most bundleSize rows, each folded, then one result
      List<Row> all = twoPhase ? list(rows) : union.ordered(rows); // partials: in any order
      for (int from = 0; from < all.size(); from += bundleSize) {
        List<Row> part = all.subList(from, (int) Math.min(all.size(), (long) from + bundleSize));
        accs = twoPhase ? merged(key, part, accs, out) : bundle(key, part, accs, out);
      }
      save(state, stored, accs, accs != null, now);
      return out.iterator();
    }
    Object[] result = accs == null ? null : accs.results();
    boolean written = false;
    int width = row.fields().length;
    for (Row r : union.ordered(rows)) {
      boolean add = Rows.accumulates(union.kind(r));
      boolean first = accs == null;
      if (first) {
        if (!add) { // no state for a retraction: dropped, as Flink's (counted)
          UnseenRetractions.dropped("aggregate", key);
          continue;
        }
        accs = new Accs();
      }
      accs.apply(union.fields(r, width), add);
      written = true;
      Object[] next = accs.results();
      if (accs.rows != 0) {
        if (first) {
          out.add(output(Wire.INSERT, key, next));
        } else if (ttlMs >= 0 || !sameResults(result, next)) {
          if (updateBefore) out.add(output(Wire.UPDATE_BEFORE, key, result));
          out.add(output(Wire.UPDATE_AFTER, key, next));
        }
        result = next;
      } else {
        out.add(output(Wire.DELETE, key, result)); // (a first row accumulates: never here)
        accs = null;
        result = null;
      }
    }
    save(state, stored, accs, written, now);
    return out.iterator();
  }

  private static List<Row> list(Iterator<Row> rows) {
    List<Row> out = new ArrayList<>();
    rows.forEachRemaining(out::add);
    return out;
  }

  /**
   * Mini-batch (Flink's MiniBatchGroupAggFunction): a bundle of the key's rows folded into its
   * accumulators, then one result: +I for a new key, -U/+U if it changed (with a state TTL
   * also if not, as Flink's), -D if its row count reached zero. Without state, the leading
   * retractions are dropped. Returns the key's accumulators after (null: none).
   */
  private Accs bundle(Row key, List<Row> rows, Accs accs, List<Row> out) {
    int from = 0;
    boolean first = accs == null;
    if (first) {
      while (from < rows.size() && !Rows.accumulates(union.kind(rows.get(from)))) {
        UnseenRetractions.dropped("aggregate", key);
        from++;
      }
      if (from == rows.size()) return null;
      accs = new Accs();
    }
    Object[] before = first ? null : accs.results();
    int width = row.fields().length;
    for (Row r : rows.subList(from, rows.size())) {
      accs.apply(union.fields(r, width), Rows.accumulates(union.kind(r)));
    }
    if (accs.rows == 0) {
      if (!first) out.add(output(Wire.DELETE, key, before));
      return null;
    }
    emit(key, first, before, accs, out);
    return accs;
  }

  /**
   * Two-phase (Flink's MiniBatchGlobalGroupAggFunction): a bundle of the key's partial
   * accumulators merged, then into the key's state, then one result as {@link #bundle} gives
   * it; without state, partials whose row counts add up to zero are no output (a retraction
   * for a key without state is counted, not dropped: a row count below zero is kept too).
   */
  private Accs merged(Row key, List<Row> partials, Accs accs, List<Row> out) {
    Accs buffer = new Accs();
    for (Row r : partials) buffer.merge(decode((byte[]) r.get(accAt)));
    boolean first = accs == null;
    if (first) {
      if (buffer.rows == 0) return null;
      accs = new Accs();
    }
    Object[] before = first ? null : accs.results();
    accs.merge(buffer);
    if (accs.rows == 0) {
      if (!first) out.add(output(Wire.DELETE, key, before));
      return null;
    }
    emit(key, first, before, accs, out);
    return accs;
  }

  /** A bundle's result for a key that has rows: +I, or -U/+U (see {@link #bundle}). */
  private void emit(Row key, boolean first, Object[] before, Accs accs, List<Row> out) {
    Object[] after = accs.results();
    if (first) {
      out.add(output(Wire.INSERT, key, after));
    } else if (ttlMs >= 0 || !sameResults(before, after)) {
      if (updateBefore) out.add(output(Wire.UPDATE_BEFORE, key, before));
      out.add(output(Wire.UPDATE_AFTER, key, after));
    }
  }

  /** Writes the key's accumulators (or removes them), with the TTL's timeout. */
  private void save(GroupState<byte[]> state, boolean stored, Accs accs, boolean written,
      long now) {
    if (accs == null) {
      if (stored) state.remove();
    } else if (written) {
      accs.written = now;
      state.update(encode(accs));
      if (ttlMs >= 0) state.setTimeoutDuration(ttlMs);
    } else if (ttlMs >= 0) { // the timeout is reset on every call: set it again
      long left = accs.written + ttlMs - now;
      state.setTimeoutDuration(Math.max(left, 1));
    }
  }

  private static boolean sameResults(Object[] a, Object[] b) {
    for (int i = 0; i < a.length; i++) if (!Values.same(a[i], b[i])) return false;
    return true;
  }

  private Row output(byte kind, Row key, Object[] results) {
    Object[] values = new Object[1 + keyCount + results.length];
    values[0] = kind;
    for (int i = 0; i < keyCount; i++) values[1 + i] = key.get(i);
    System.arraycopy(results, 0, values, 1 + keyCount, results.length);
    return RowFactory.create(values);
  }

  // -- the state value -------------------------------------------------------------------------

  byte[] encode(Accs s) {
    RowCodec.Out out = new RowCodec.Out(64);
    out.raw(FORMAT, 1);
    out.zigzag(s.rows);
    out.zigzag(s.written);
    for (int i = 0; i < calls.length; i++) calls[i].fn.write(out, s.accs[i]);
    for (int m = 0; m < distinctArgs.length; m++) {
      AggFunctions.writeCounts(out, distinctFormats[m], s.distinct.get(m));
    }
    return out.bytes();
  }

  private Accs decode(byte[] bytes) {
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown aggregate state format");
    Accs s = new Accs();
    s.rows = in.zigzag();
    s.written = in.zigzag();
    for (int i = 0; i < calls.length; i++) calls[i].fn.read(in, s.accs[i]);
    for (int m = 0; m < distinctArgs.length; m++) {
      AggFunctions.readCounts(in, distinctFormats[m], s.distinct.get(m));
    }
    return s;
  }
}

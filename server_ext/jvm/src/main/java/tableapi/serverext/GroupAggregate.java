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
 * <p>State value: the key's accumulators ({@link AggsHandle}'s codec). State TTL: a key
 * not written for {@code ttl} is dropped silently (on load, or by a processing-time timeout).
 */
final class GroupAggregate implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;

  private final AggsHandle aggs;
  private final int keyCount;
  private final boolean updateBefore;
  private final boolean miniBatch; // fold a key's rows of a micro-batch, then emit once
  private final int bundleSize; // mini-batch: the most rows one bundle folds
  private final boolean twoPhase; // the rows are partial accumulators (__acc) to merge
  private final long ttlMs; // -1: none
  private final InputUnion union;
  private final int accAt; // two-phase: the __acc column of the input; -1: none

  GroupAggregate(AggsHandle aggs, int keyCount, boolean updateBefore, boolean miniBatch,
      int bundleSize, boolean twoPhase, long ttlMs, StructType input) {
    this.aggs = aggs;
    this.keyCount = keyCount;
    this.updateBefore = updateBefore;
    this.miniBatch = miniBatch || twoPhase;
    this.bundleSize = bundleSize;
    this.twoPhase = twoPhase;
    this.ttlMs = ttlMs;
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
    List<Specs.AggCall> specCalls = spec.aggs();
    if (output.fields().length != 1 + keyCount + specCalls.size()) {
      throw new IllegalArgumentException("the output schema has " + output.fields().length
          + " columns but the aggregate gives 1 + " + keyCount + " keys + " + specCalls.size());
    }
    DataType[] results = new DataType[specCalls.size()];
    for (int i = 0; i < results.length; i++) {
      results[i] = output.fields()[1 + keyCount + i].dataType();
    }
    AggsHandle aggs = AggsHandle.of(row, specCalls, results, spec.retractions(),
        request.java8Time());
    boolean twoPhase = !local && spec.twoPhase();
    if (twoPhase && !List.of(request.input().fieldNames()).contains(ACC)) {
      throw new IllegalArgumentException("a two-phase aggregation reads the partial "
          + "accumulators of the local aggregation (" + ACC + "); its input has "
          + List.of(request.input().fieldNames()));
    }
    return new GroupAggregate(aggs, keyCount, spec.updateBefore(), spec.miniBatch(),
        spec.bundleSize(), twoPhase, spec.ttlMs(), request.input());
  }

  /** The accumulators of the calls (what the local phase folds into). */
  AggsHandle aggs() {
    return aggs;
  }

  int keyCount() {
    return keyCount;
  }

  int bundleSize() {
    return bundleSize;
  }

  // -- the function ----------------------------------------------------------------------------

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    aggs.init();
    if (state.hasTimedOut()) { // not written for the TTL: the key's state expired
      if (state.exists()) state.remove();
      return Collections.emptyIterator();
    }
    long now = ttlMs >= 0 ? state.getCurrentProcessingTimeMs() : 0;
    boolean stored = state.exists();
    AggsHandle.Accs accs = stored ? aggs.decode(state.get()) : null;
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
    int width = aggs.row().fields().length;
    for (Row r : union.ordered(rows)) {
      boolean add = Rows.accumulates(union.kind(r));
      boolean first = accs == null;
      if (first) {
        if (!add) { // no state for a retraction: dropped, as Flink's (counted)
          UnseenRetractions.dropped("aggregate", key);
          continue;
        }
        accs = aggs.new Accs();
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
  private AggsHandle.Accs bundle(Row key, List<Row> rows, AggsHandle.Accs accs,
      List<Row> out) {
    int from = 0;
    boolean first = accs == null;
    if (first) {
      while (from < rows.size() && !Rows.accumulates(union.kind(rows.get(from)))) {
        UnseenRetractions.dropped("aggregate", key);
        from++;
      }
      if (from == rows.size()) return null;
      accs = aggs.new Accs();
    }
    Object[] before = first ? null : accs.results();
    int width = aggs.row().fields().length;
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
  private AggsHandle.Accs merged(Row key, List<Row> partials, AggsHandle.Accs accs,
      List<Row> out) {
    AggsHandle.Accs buffer = aggs.new Accs();
    for (Row r : partials) buffer.merge(aggs.decode((byte[]) r.get(accAt)));
    boolean first = accs == null;
    if (first) {
      if (buffer.rows == 0) return null;
      accs = aggs.new Accs();
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
  private void emit(Row key, boolean first, Object[] before, AggsHandle.Accs accs,
      List<Row> out) {
    Object[] after = accs.results();
    if (first) {
      out.add(output(Wire.INSERT, key, after));
    } else if (ttlMs >= 0 || !sameResults(before, after)) {
      if (updateBefore) out.add(output(Wire.UPDATE_BEFORE, key, before));
      out.add(output(Wire.UPDATE_AFTER, key, after));
    }
  }

  /** Writes the key's accumulators (or removes them), with the TTL's timeout. */
  private void save(GroupState<byte[]> state, boolean stored, AggsHandle.Accs accs,
      boolean written, long now) {
    if (accs == null) {
      if (stored) state.remove();
    } else if (written) {
      accs.written = now;
      state.update(aggs.encode(accs));
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
}

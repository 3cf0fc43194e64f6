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
 * <p>Functions, with Flink's result types and NULL rules: COUNT(*), COUNT(x) (non-null
 * values), SUM (NULL over no non-null value; integral sums wrap as Java's arithmetic),
 * AVG (the sum as BIGINT, DOUBLE or DECIMAL(38, s), divided by the count; an integral
 * average truncates toward zero and is cast to the argument's type; a DECIMAL average has
 * scale max(6, s), HALF_UP), MIN and MAX (over a retracting input a map value -> count, as
 * Flink's MinWithRetractAggFunction, the current extreme kept beside it), and the DISTINCT
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

  /** The aggregate functions. */
  enum Fn {
    COUNT_STAR,
    COUNT,
    SUM,
    AVG,
    MIN,
    MAX;

    static Fn of(String name) {
      return switch (name) {
        case "count_star" -> COUNT_STAR;
        case "count" -> COUNT;
        case "sum" -> SUM;
        case "avg" -> AVG;
        case "min" -> MIN;
        case "max" -> MAX;
        default -> throw new IllegalArgumentException("unknown aggregate function " + name
            + "; the operator computes count_star, count, sum, avg, min and max");
      };
    }
  }

  /** One aggregate call: its function, argument field (-1: none), types and distinct map. */
  record Call(Fn fn, int arg, boolean distinct, DataType argType, DataType resultType,
      DataType sumType, int distinctSlot) implements Serializable {}

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

  private transient RowCodec.RowFormat[] valueFormats; // per call: its stored value's format
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
      Fn fn = Fn.of(a.function());
      int arg = a.arg();
      boolean isDistinct = a.distinct();
      if ((fn == Fn.COUNT_STAR) != (arg < 0) || arg >= row.fields().length) {
        throw new IllegalArgumentException("aggregate " + i + " (" + fn + ") has argument "
            + arg + " of " + row.fields().length + " input fields");
      }
      if (fn == Fn.COUNT_STAR && isDistinct) {
        throw new IllegalArgumentException("COUNT(*) has no DISTINCT form");
      }
      DataType argType = arg < 0 ? null : row.fields()[arg].dataType();
      DataType result = output.fields()[1 + keyCount + i].dataType();
      DataType sum = checkTypes(fn, argType, result, i);
      int slot = -1;
      if (isDistinct) {
        slot = distinct.indexOf(arg);
        if (slot < 0) {
          slot = distinct.size();
          distinct.add(arg);
        }
      }
      calls[i] = new Call(fn, arg, isDistinct, argType, result, sum, slot);
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

  /** Checks a call's argument and result types; the type its SUM or AVG sums in. */
  private static DataType checkTypes(Fn fn, DataType arg, DataType result, int i) {
    String what = "aggregate " + i + " (" + fn + ")";
    switch (fn) {
      case COUNT_STAR, COUNT -> {
        if (!(result instanceof LongType)) {
          throw new IllegalArgumentException(what + " gives BIGINT, not " + result.sql());
        }
        return null;
      }
      case SUM -> {
        if (!numeric(arg) || !numeric(result)) {
          throw new IllegalArgumentException(what + " sums numbers, not " + arg.sql());
        }
        return result;
      }
      case AVG -> {
        if (!numeric(arg) || !numeric(result)) {
          throw new IllegalArgumentException(what + " averages numbers, not " + arg.sql());
        }
        if (arg instanceof DecimalType d) return DataTypes.createDecimalType(38, d.scale());
        return arg instanceof FloatType || arg instanceof DoubleType
            ? DataTypes.DoubleType : DataTypes.LongType;
      }
      default -> {
        if (arg instanceof MapType || arg instanceof ArrayType || arg instanceof StructType) {
          throw new IllegalArgumentException(what + " compares values, not " + arg.sql());
        }
        if (!DataType.equalsStructurally(arg, result, true)) {
          throw new IllegalArgumentException(what + " of " + arg.sql() + " gives "
              + arg.sql() + ", not " + result.sql());
        }
        return null;
      }
    }
  }

  private static boolean numeric(DataType t) {
    return t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType
        || t instanceof LongType || t instanceof FloatType || t instanceof DoubleType
        || t instanceof DecimalType;
  }

  void init() {
    if (valueFormats == null) {
      valueFormats = new RowCodec.RowFormat[calls.length];
      for (int i = 0; i < calls.length; i++) {
        Call c = calls[i];
        DataType t = switch (c.fn) {
          case SUM, AVG -> c.sumType;
          case MIN, MAX -> c.argType;
          default -> null;
        };
        if (t != null) valueFormats[i] = format(t);
      }
      distinctFormats = new RowCodec.RowFormat[distinctArgs.length];
      for (int i = 0; i < distinctArgs.length; i++) {
        distinctFormats[i] = format(row.fields()[distinctArgs[i]].dataType());
      }
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
      boolean sum = (c.fn == Fn.SUM || c.fn == Fn.AVG) && integral(c.argType)
          && integral(c.sumType);
      if (c.distinct || !(c.fn == Fn.COUNT_STAR || c.fn == Fn.COUNT || sum)) return false;
    }
    return true;
  }

  private static boolean integral(DataType t) {
    return t instanceof LongType || t instanceof IntegerType || t instanceof ShortType
        || t instanceof ByteType;
  }

  /** The input row's field each call reads (-1: none, COUNT(*)). */
  int[] callArgs() {
    int[] args = new int[calls.length];
    for (int i = 0; i < calls.length; i++) {
      args[i] = calls[i].fn == Fn.COUNT_STAR ? -1 : calls[i].arg;
    }
    return args;
  }

  /** Whether call {@code i} sums its values (SUM, AVG), not only counts them. */
  boolean sums(int i) {
    return calls[i].fn == Fn.SUM || calls[i].fn == Fn.AVG;
  }

  private RowCodec.RowFormat format(DataType t) {
    return new RowCodec.RowFormat(
        new StructType(new StructField[] {DataTypes.createStructField("v", t, true)}), java8Time);
  }

  // -- one key's accumulators ------------------------------------------------------------------

  /** A call's accumulator: a count, a value (sum, extreme), and MIN/MAX's value counts. */
  private static final class Acc {
    long count;
    Object value;
    Map<Values.Tuple, long[]> counts; // MIN/MAX over a retracting input
  }

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
        Acc a = accs.accs[i];
        a.count = counts[i];
        if (summed[i]) a.value = plus(calls[i].sumType, null, sums[i], true);
      }
      return accs;
    }
  }

  /** A key's state: its row count, last write, accumulators and distinct maps. */
  final class Accs {
    long rows;
    long written;
    final Acc[] accs = new Acc[calls.length];
    final List<Map<Values.Tuple, long[]>> distinct = new ArrayList<>(distinctArgs.length);

    Accs() {
      for (int i = 0; i < accs.length; i++) {
        accs[i] = new Acc();
        if (retractions && (calls[i].fn == Fn.MIN || calls[i].fn == Fn.MAX)) {
          accs[i].counts = new LinkedHashMap<>();
        }
      }
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
        if (c.fn == Fn.COUNT_STAR) continue; // the row count
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
        if (v != null) count(distinct.get(m), new Values.Tuple(new Object[] {v}), add ? 1 : -1);
      }
      for (int i = 0; i < calls.length; i++) {
        Call c = calls[i];
        if (c.fn == Fn.COUNT_STAR || c.distinct) continue;
        Object v = values[c.arg];
        if (v == null) continue;
        Acc a = accs[i];
        switch (c.fn) {
          case COUNT -> a.count += add ? 1 : -1;
          case SUM, AVG -> {
            a.count += add ? 1 : -1;
            a.value = plus(c.sumType, a.value, v, add);
          }
          default -> {
            if (a.counts == null) {
              extreme(c, a, v, true); // insert-only: the extreme so far
            } else {
              count(a.counts, new Values.Tuple(new Object[] {v}), add ? 1 : -1);
            }
          }
        }
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
          long now = count(map, e.getKey(), e.getValue()[0]);
          if ((was > 0) == (now > 0)) continue; // the value neither enters nor leaves
          Object v = e.getKey().values[0];
          for (int i = 0; i < calls.length; i++) {
            if (calls[i].distinct && calls[i].distinctSlot == m) applyCall(i, v, now > 0);
          }
        }
      }
      for (int i = 0; i < calls.length; i++) {
        Call c = calls[i];
        if (c.fn == Fn.COUNT_STAR || c.distinct) continue;
        Acc a = accs[i];
        Acc b = o.accs[i];
        switch (c.fn) {
          case COUNT -> a.count += b.count;
          case SUM, AVG -> {
            a.count += b.count;
            if (b.value != null) a.value = plus(c.sumType, a.value, b.value, true);
          }
          default -> {
            if (a.counts == null) {
              if (b.value != null) extreme(c, a, b.value, true);
            } else {
              for (Map.Entry<Values.Tuple, long[]> e : b.counts.entrySet()) {
                count(a.counts, e.getKey(), e.getValue()[0]);
              }
              a.value = null; // the extreme of the values whose count is positive
              for (Map.Entry<Values.Tuple, long[]> e : a.counts.entrySet()) {
                Object v = e.getKey().values[0];
                if (e.getValue()[0] > 0 && (a.value == null || better(v, a.value, c.fn == Fn.MIN))) {
                  a.value = v;
                }
              }
            }
          }
        }
      }
    }

    /** One value of call {@code i} accumulated or retracted (not DISTINCT-checked). */
    private void applyCall(int i, Object v, boolean add) {
      Call c = calls[i];
      Acc a = accs[i];
      switch (c.fn) {
        case COUNT -> a.count += add ? 1 : -1;
        case SUM, AVG -> {
          a.count += add ? 1 : -1;
          a.value = plus(c.sumType, a.value, v, add);
        }
        default -> extreme(c, a, v, add);
      }
    }

    /** The key's aggregate results, in call order. */
    Object[] results() {
      Object[] out = new Object[calls.length];
      for (int i = 0; i < calls.length; i++) {
        Call c = calls[i];
        Acc a = accs[i];
        out[i] = switch (c.fn) {
          case COUNT_STAR -> rows;
          case COUNT -> a.count;
          case SUM -> a.count == 0 ? null : a.value;
          case AVG -> a.count == 0 ? null : average(c, a.value, a.count);
          default -> a.counts != null && a.counts.isEmpty() ? null : a.value;
        };
      }
      return out;
    }
  }

  /** MIN/MAX: Flink's MinAggFunction (insert-only) or MinWithRetractAggFunction. */
  private static void extreme(Call c, Acc a, Object v, boolean add) {
    boolean min = c.fn == Fn.MIN;
    if (a.counts == null) {
      if (add && (a.value == null || better(v, a.value, min))) a.value = v;
      return;
    }
    Values.Tuple k = new Values.Tuple(new Object[] {v});
    long[] n = a.counts.get(k);
    if (add) {
      if (a.counts.isEmpty() || better(v, a.value, min)) a.value = v;
      if (n == null) {
        a.counts.put(k, new long[] {1});
      } else {
        n[0]++;
      }
    } else if (n != null && --n[0] == 0) {
      a.counts.remove(k);
      if (Values.same(v, a.value)) { // the extreme left: the next one from the counts
        a.value = null;
        for (Values.Tuple t : a.counts.keySet()) {
          if (a.value == null || better(t.values[0], a.value, min)) a.value = t.values[0];
        }
      }
    }
  }

  /** Adds {@code delta} to a value's count (gone at zero); returns the new count. */
  private static long count(Map<Values.Tuple, long[]> counts, Values.Tuple k, long delta) {
    long[] n = counts.get(k);
    long now = (n == null ? 0 : n[0]) + delta;
    if (now == 0) {
      counts.remove(k);
    } else if (n == null) {
      counts.put(k, new long[] {now});
    } else {
      n[0] = now;
    }
    return now;
  }

  private static boolean better(Object v, Object current, boolean min) {
    int cmp = compare(v, current);
    return min ? cmp < 0 : cmp > 0;
  }

  /** Flink's order of two values of one type (strings by code point, bytes unsigned). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static int compare(Object a, Object b) {
    if (a instanceof String x && b instanceof String y) return Values.compareCodePoints(x, y);
    if (a instanceof byte[] x && b instanceof byte[] y) return Arrays.compareUnsigned(x, y);
    return ((Comparable) a).compareTo(b);
  }

  /** {@code sum + v} (or {@code - v}) in the sum's type: Java's wrapping integer arithmetic. */
  private static Object plus(DataType t, Object sum, Object v, boolean add) {
    Number x = (Number) v;
    if (t instanceof DecimalType d) {
      BigDecimal b = x instanceof BigDecimal bd ? bd : new BigDecimal(x.toString());
      BigDecimal s = sum == null ? BigDecimal.ZERO : (BigDecimal) sum;
      return (add ? s.add(b) : s.subtract(b)).setScale(d.scale(), RoundingMode.HALF_UP);
    }
    if (t instanceof DoubleType) {
      double s = sum == null ? 0 : (Double) sum;
      return add ? s + x.doubleValue() : s - x.doubleValue();
    }
    if (t instanceof FloatType) {
      float s = sum == null ? 0 : (Float) sum;
      return add ? s + x.floatValue() : s - x.floatValue();
    }
    long s = sum == null ? 0 : ((Number) sum).longValue();
    long r = add ? s + x.longValue() : s - x.longValue();
    if (t instanceof ByteType) return (byte) r;
    if (t instanceof ShortType) return (short) r;
    if (t instanceof IntegerType) return (int) r;
    return r;
  }

  /** AVG's result: the sum divided by the count, in the result's type. */
  private static Object average(Call c, Object sum, long count) {
    DataType t = c.resultType;
    if (t instanceof DecimalType d) {
      return ((BigDecimal) sum).divide(BigDecimal.valueOf(count), d.scale(), RoundingMode.HALF_UP);
    }
    if (sum instanceof Double s) {
      double avg = s / count;
      return t instanceof FloatType ? (Object) (float) avg : (Object) avg;
    }
    long avg = (Long) sum / count; // truncated toward zero, as Java's
    if (t instanceof ByteType) return (byte) avg;
    if (t instanceof ShortType) return (short) avg;
    if (t instanceof IntegerType) return (int) avg;
    if (t instanceof LongType) return avg;
    return t instanceof FloatType ? (Object) (float) avg : (Object) (double) avg;
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
    for (int i = 0; i < calls.length; i++) {
      Acc a = s.accs[i];
      switch (calls[i].fn) {
        case COUNT_STAR -> { }
        case COUNT -> out.zigzag(a.count);
        case SUM, AVG -> {
          out.zigzag(a.count);
          valueFormats[i].write(out, new Object[] {a.value});
        }
        default -> {
          valueFormats[i].write(out, new Object[] {a.value});
          if (a.counts != null) writeCounts(out, valueFormats[i], a.counts);
        }
      }
    }
    for (int m = 0; m < distinctArgs.length; m++) {
      writeCounts(out, distinctFormats[m], s.distinct.get(m));
    }
    return out.bytes();
  }

  private Accs decode(byte[] bytes) {
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown aggregate state format");
    Accs s = new Accs();
    s.rows = in.zigzag();
    s.written = in.zigzag();
    for (int i = 0; i < calls.length; i++) {
      Acc a = s.accs[i];
      switch (calls[i].fn) {
        case COUNT_STAR -> { }
        case COUNT -> a.count = in.zigzag();
        case SUM, AVG -> {
          a.count = in.zigzag();
          a.value = valueFormats[i].read(in)[0];
        }
        default -> {
          a.value = valueFormats[i].read(in)[0];
          if (a.counts != null) readCounts(in, valueFormats[i], a.counts);
        }
      }
    }
    for (int m = 0; m < distinctArgs.length; m++) {
      readCounts(in, distinctFormats[m], s.distinct.get(m));
    }
    return s;
  }

  private static void writeCounts(
      RowCodec.Out out, RowCodec.RowFormat format, Map<Values.Tuple, long[]> counts) {
    out.varint(counts.size());
    for (Map.Entry<Values.Tuple, long[]> e : counts.entrySet()) {
      format.write(out, e.getKey().values);
      out.zigzag(e.getValue()[0]);
    }
  }

  private static void readCounts(
      RowCodec.In in, RowCodec.RowFormat format, Map<Values.Tuple, long[]> counts) {
    for (long j = 0, n = in.varint(); j < n; j++) {
      Object[] v = format.read(in);
      counts.put(new Values.Tuple(v), new long[] {in.zigzag()});
    }
  }
}

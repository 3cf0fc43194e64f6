package tableapi.serverext;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
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
 * The aggregate functions, one class each behind {@link Fn} (Flink's AggregateFunction with
 * {@code retract} and {@code merge}, as its AggsHandleFunction calls them): COUNT(*), COUNT,
 * SUM, AVG, MIN and MAX, with Flink's result types and NULL rules. A function holds no state
 * of a key: its accumulator is an {@link Acc}; the group aggregate ({@link GroupAggregate}),
 * its local phase ({@link LocalGroupAggregate}) and a window aggregate keep the accumulators
 * where they keep a key's (or a window's) state, and write them with {@link Fn#write}.
 */
final class AggFunctions {
  private AggFunctions() {}

  /** An accumulator: a count, a value (sum, extreme), and MIN/MAX's value counts. */
  static final class Acc {
    long count;
    Object value;
    Map<Values.Tuple, long[]> counts; // MIN/MAX over a retracting input
  }

  /**
   * One aggregate function of one call: its argument's values (never NULL: a NULL is not
   * accumulated) go in, its result comes out. {@code rows} in {@link #value} is the key's row
   * count, COUNT(*)'s value (which keeps no count of its own).
   */
  abstract static class Fn implements Serializable {
    private static final long serialVersionUID = 1L;
    final String name;

    Fn(String name) {
      this.name = name;
    }

    /** A new, empty accumulator. */
    Acc create() {
      return new Acc();
    }

    abstract void accumulate(Acc acc, Object v);

    abstract void retract(Acc acc, Object v);

    /**
     * Folds one value into a partial accumulator (a two-phase aggregation's local phase):
     * as accumulate or retract, unless the function's partial differs (MIN/MAX's value counts
     * may go negative, the retraction of a value another task added).
     */
    void fold(Acc partial, Object v, boolean add) {
      if (add) {
        accumulate(partial, v);
      } else {
        retract(partial, v);
      }
    }

    /** Merges a partial accumulator into {@code acc} (the global phase). */
    abstract void merge(Acc acc, Acc partial);

    /** The result; {@code rows} is the key's row count. */
    abstract Object value(Acc acc, long rows);

    /** The accumulator in the state value's format. */
    abstract void write(RowCodec.Out out, Acc acc);

    /** Reads an accumulator {@link #write} wrote into {@code acc} (made by {@link #create}). */
    abstract void read(RowCodec.In in, Acc acc);

    /** Whether it folds as a count or an integral sum (the local phase's primitive path). */
    boolean integral() {
      return false;
    }

    /** Whether it sums its values (SUM, AVG), not only counts them. */
    boolean sums() {
      return false;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /**
   * The function {@code name} (the wire's: count_star, count, sum, avg, min, max) of a call
   * at {@code index} with argument type {@code arg} (null: none) and result type {@code
   * result}, its types checked; {@code retractions}: the input may retract (MIN/MAX then keep
   * value counts).
   */
  static Fn of(String name, DataType arg, DataType result, boolean retractions,
      boolean java8Time, int index) {
    String what = "aggregate " + index + " (" + name.toUpperCase(java.util.Locale.ROOT) + ")";
    return switch (name) {
      case "count_star" -> new CountStar(what, result);
      case "count" -> new Count(what, result);
      case "sum" -> new Sum(what, arg, result, java8Time);
      case "avg" -> new Avg(what, arg, result, java8Time);
      case "min", "max" -> new MinMax(what, name.equals("min"), arg, result, retractions,
          java8Time);
      default -> throw new IllegalArgumentException("unknown aggregate function " + name
          + "; the operator computes count_star, count, sum, avg, min and max");
    };
  }

  /** COUNT(*): the key's row count; no accumulator of its own. */
  static final class CountStar extends Fn {
    private static final long serialVersionUID = 1L;

    CountStar(String what, DataType result) {
      super("COUNT_STAR");
      checkBigint(what, result);
    }

    @Override
    void accumulate(Acc acc, Object v) {}

    @Override
    void retract(Acc acc, Object v) {}

    @Override
    void merge(Acc acc, Acc partial) {}

    @Override
    Object value(Acc acc, long rows) {
      return rows;
    }

    @Override
    void write(RowCodec.Out out, Acc acc) {}

    @Override
    void read(RowCodec.In in, Acc acc) {}

    @Override
    boolean integral() {
      return true;
    }
  }

  /** COUNT(x): the count of non-null values. */
  static final class Count extends Fn {
    private static final long serialVersionUID = 1L;

    Count(String what, DataType result) {
      super("COUNT");
      checkBigint(what, result);
    }

    @Override
    void accumulate(Acc acc, Object v) {
      acc.count++;
    }

    @Override
    void retract(Acc acc, Object v) {
      acc.count--;
    }

    @Override
    void merge(Acc acc, Acc partial) {
      acc.count += partial.count;
    }

    @Override
    Object value(Acc acc, long rows) {
      return acc.count;
    }

    @Override
    void write(RowCodec.Out out, Acc acc) {
      out.zigzag(acc.count);
    }

    @Override
    void read(RowCodec.In in, Acc acc) {
      acc.count = in.zigzag();
    }

    @Override
    boolean integral() {
      return true;
    }
  }

  /**
   * SUM: NULL over no non-null value; integral sums wrap as Java's arithmetic; the sum is
   * kept in {@code sumType} (the result's type for SUM, see {@link Avg} for AVG).
   */
  static class Sum extends Fn {
    private static final long serialVersionUID = 1L;
    final DataType argType;
    final DataType resultType;
    final DataType sumType;
    private final boolean java8Time;
    private transient RowCodec.RowFormat format;

    Sum(String what, DataType arg, DataType result, boolean java8Time) {
      this("SUM", arg, result, checkSum(what, arg, result), java8Time);
    }

    Sum(String name, DataType arg, DataType result, DataType sumType, boolean java8Time) {
      super(name);
      this.argType = arg;
      this.resultType = result;
      this.sumType = sumType;
      this.java8Time = java8Time;
    }

    private static DataType checkSum(String what, DataType arg, DataType result) {
      if (!numeric(arg) || !numeric(result)) {
        throw new IllegalArgumentException(what + " sums numbers, not " + sql(arg));
      }
      return result;
    }

    @Override
    void accumulate(Acc acc, Object v) {
      acc.count++;
      acc.value = plus(sumType, acc.value, v, true);
    }

    @Override
    void retract(Acc acc, Object v) {
      acc.count--;
      acc.value = plus(sumType, acc.value, v, false);
    }

    @Override
    void merge(Acc acc, Acc partial) {
      acc.count += partial.count;
      if (partial.value != null) acc.value = plus(sumType, acc.value, partial.value, true);
    }

    @Override
    Object value(Acc acc, long rows) {
      return acc.count == 0 ? null : acc.value;
    }

    @Override
    void write(RowCodec.Out out, Acc acc) {
      out.zigzag(acc.count);
      format().write(out, new Object[] {acc.value});
    }

    @Override
    void read(RowCodec.In in, Acc acc) {
      acc.count = in.zigzag();
      acc.value = format().read(in)[0];
    }

    private RowCodec.RowFormat format() {
      if (format == null) format = valueFormat(sumType, java8Time);
      return format;
    }

    /** The sum of integral values summed in a long, in the sum's type. */
    Object integralSum(long sum) {
      return plus(sumType, null, sum, true);
    }

    @Override
    boolean integral() {
      return isIntegral(argType) && isIntegral(sumType);
    }

    @Override
    boolean sums() {
      return true;
    }
  }

  /**
   * AVG: the sum as BIGINT, DOUBLE or DECIMAL(38, s), divided by the count; an integral
   * average truncates toward zero and is cast to the argument's type; a DECIMAL average has
   * scale max(6, s), HALF_UP.
   */
  static final class Avg extends Sum {
    private static final long serialVersionUID = 1L;

    Avg(String what, DataType arg, DataType result, boolean java8Time) {
      super("AVG", arg, result, checkAvg(what, arg, result), java8Time);
    }

    private static DataType checkAvg(String what, DataType arg, DataType result) {
      if (!numeric(arg) || !numeric(result)) {
        throw new IllegalArgumentException(what + " averages numbers, not " + sql(arg));
      }
      if (arg instanceof DecimalType d) return DataTypes.createDecimalType(38, d.scale());
      return arg instanceof FloatType || arg instanceof DoubleType
          ? DataTypes.DoubleType : DataTypes.LongType;
    }

    @Override
    Object value(Acc acc, long rows) {
      return acc.count == 0 ? null : average(resultType, acc.value, acc.count);
    }
  }

  /**
   * MIN and MAX: Flink's MinAggFunction (insert-only: the extreme so far) or, over a
   * retracting input, MinWithRetractAggFunction (a map value -> count, the current extreme
   * kept beside it).
   */
  static final class MinMax extends Fn {
    private static final long serialVersionUID = 1L;
    private final boolean min;
    private final DataType argType;
    private final boolean retractions;
    private final boolean java8Time;
    private transient RowCodec.RowFormat format;

    MinMax(String what, boolean min, DataType arg, DataType result, boolean retractions,
        boolean java8Time) {
      super(min ? "MIN" : "MAX");
      if (arg instanceof MapType || arg instanceof ArrayType || arg instanceof StructType) {
        throw new IllegalArgumentException(what + " compares values, not " + arg.sql());
      }
      if (!DataType.equalsStructurally(arg, result, true)) {
        throw new IllegalArgumentException(what + " of " + arg.sql() + " gives "
            + arg.sql() + ", not " + result.sql());
      }
      this.min = min;
      this.argType = arg;
      this.retractions = retractions;
      this.java8Time = java8Time;
    }

    @Override
    Acc create() {
      Acc acc = new Acc();
      if (retractions) acc.counts = new LinkedHashMap<>();
      return acc;
    }

    @Override
    void accumulate(Acc acc, Object v) {
      extreme(acc, v, true);
    }

    @Override
    void retract(Acc acc, Object v) {
      extreme(acc, v, false);
    }

    @Override
    void fold(Acc partial, Object v, boolean add) {
      if (partial.counts == null) {
        extreme(partial, v, true); // insert-only: the extreme so far
      } else {
        count(partial.counts, new Values.Tuple(new Object[] {v}), add ? 1 : -1);
      }
    }

    @Override
    void merge(Acc acc, Acc partial) {
      if (acc.counts == null) {
        if (partial.value != null) extreme(acc, partial.value, true);
        return;
      }
      for (Map.Entry<Values.Tuple, long[]> e : partial.counts.entrySet()) {
        count(acc.counts, e.getKey(), e.getValue()[0]);
      }
      acc.value = null; // the extreme of the values whose count is positive
      for (Map.Entry<Values.Tuple, long[]> e : acc.counts.entrySet()) {
        Object v = e.getKey().values[0];
        if (e.getValue()[0] > 0 && (acc.value == null || better(v, acc.value))) acc.value = v;
      }
    }

    @Override
    Object value(Acc acc, long rows) {
      return acc.counts != null && acc.counts.isEmpty() ? null : acc.value;
    }

    @Override
    void write(RowCodec.Out out, Acc acc) {
      format().write(out, new Object[] {acc.value});
      if (acc.counts != null) writeCounts(out, format(), acc.counts);
    }

    @Override
    void read(RowCodec.In in, Acc acc) {
      acc.value = format().read(in)[0];
      if (acc.counts != null) readCounts(in, format(), acc.counts);
    }

    private RowCodec.RowFormat format() {
      if (format == null) format = valueFormat(argType, java8Time);
      return format;
    }

    private void extreme(Acc a, Object v, boolean add) {
      if (a.counts == null) {
        if (add && (a.value == null || better(v, a.value))) a.value = v;
        return;
      }
      Values.Tuple k = new Values.Tuple(new Object[] {v});
      long[] n = a.counts.get(k);
      if (add) {
        if (a.counts.isEmpty() || better(v, a.value)) a.value = v;
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
            if (a.value == null || better(t.values[0], a.value)) a.value = t.values[0];
          }
        }
      }
    }

    private boolean better(Object v, Object current) {
      int cmp = compare(v, current);
      return min ? cmp < 0 : cmp > 0;
    }
  }

  // -- what the functions share --------------------------------------------------------------

  /** The format of one stored value of type {@code t}. */
  static RowCodec.RowFormat valueFormat(DataType t, boolean java8Time) {
    return new RowCodec.RowFormat(
        new StructType(new StructField[] {DataTypes.createStructField("v", t, true)}), java8Time);
  }

  /** Adds {@code delta} to a value's count (gone at zero); returns the new count. */
  static long count(Map<Values.Tuple, long[]> counts, Values.Tuple k, long delta) {
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

  /** Value counts in the state value's format: varint n, n x (value, zigzag count). */
  static void writeCounts(
      RowCodec.Out out, RowCodec.RowFormat format, Map<Values.Tuple, long[]> counts) {
    out.varint(counts.size());
    for (Map.Entry<Values.Tuple, long[]> e : counts.entrySet()) {
      format.write(out, e.getKey().values);
      out.zigzag(e.getValue()[0]);
    }
  }

  static void readCounts(
      RowCodec.In in, RowCodec.RowFormat format, Map<Values.Tuple, long[]> counts) {
    for (long j = 0, n = in.varint(); j < n; j++) {
      Object[] v = format.read(in);
      counts.put(new Values.Tuple(v), new long[] {in.zigzag()});
    }
  }

  /** Flink's order of two values of one type (strings by code point, bytes unsigned). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static int compare(Object a, Object b) {
    if (a instanceof String x && b instanceof String y) return Values.compareCodePoints(x, y);
    if (a instanceof byte[] x && b instanceof byte[] y) return Arrays.compareUnsigned(x, y);
    return ((Comparable) a).compareTo(b);
  }

  /** {@code sum + v} (or {@code - v}) in the sum's type: Java's wrapping integer arithmetic. */
  static Object plus(DataType t, Object sum, Object v, boolean add) {
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
  static Object average(DataType t, Object sum, long count) {
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

  private static void checkBigint(String what, DataType result) {
    if (!(result instanceof LongType)) {
      throw new IllegalArgumentException(what + " gives BIGINT, not " + result.sql());
    }
  }

  private static String sql(DataType t) {
    return t == null ? "no argument" : t.sql();
  }

  static boolean numeric(DataType t) {
    return t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType
        || t instanceof LongType || t instanceof FloatType || t instanceof DoubleType
        || t instanceof DecimalType;
  }

  static boolean isIntegral(DataType t) {
    return t instanceof LongType || t instanceof IntegerType || t instanceof ShortType
        || t instanceof ByteType;
  }
}

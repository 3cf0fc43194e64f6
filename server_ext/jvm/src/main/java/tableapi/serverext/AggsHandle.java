package tableapi.serverext;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The accumulators of an aggregation's calls over one input row type (Flink's
 * AggsHandleFunction): the calls ({@link AggFunctions} and an argument field each), their
 * DISTINCT maps (a map value -> count per distinct argument, shared by the calls on it: a call
 * sees a value when its count goes 0 -> 1 and loses it at 1 -> 0; NULLs are not counted), a
 * key's {@link Accs} (accumulate or retract a row, fold it into a partial, merge a partial,
 * the results) and their state codec. The group aggregate ({@link GroupAggregate}) and its
 * local phase ({@link LocalGroupAggregate}) share it; a window aggregate keeps one {@link
 * Accs} per window.
 *
 * <p>State value: {@code byte FORMAT; zigzag rows; zigzag written_at_ms; per call its
 * accumulator ({@link AggFunctions.Fn#write}); per distinct argument varint n, n x (value,
 * zigzag count)}.
 */
final class AggsHandle implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final byte FORMAT = 1;

  /** One aggregate call: its function, argument field (-1: none) and distinct map (-1: none). */
  record Call(AggFunctions.Fn fn, int arg, boolean distinct, int distinctSlot)
      implements Serializable {}

  private final StructType row;
  private final Call[] calls;
  private final int[] distinctArgs; // the field of each distinct map
  private final boolean java8Time;
  private transient RowCodec.RowFormat[] distinctFormats; // per distinct map: its values'

  AggsHandle(StructType row, Call[] calls, int[] distinctArgs, boolean java8Time) {
    this.row = row;
    this.calls = calls;
    this.distinctArgs = distinctArgs;
    this.java8Time = java8Time;
  }

  /**
   * The accumulators of a spec's calls over {@code row}, checked: each call's function (of
   * {@link AggFunctions}) for its argument's type and {@code results[i]}, its result type;
   * the DISTINCT calls on one argument share one map. What the group and window aggregates
   * build theirs with.
   */
  static AggsHandle of(StructType row, List<Specs.AggCall> specCalls, DataType[] results,
      boolean retractions, boolean java8Time) {
    Call[] calls = new Call[specCalls.size()];
    List<Integer> distinct = new ArrayList<>();
    for (int i = 0; i < calls.length; i++) {
      Specs.AggCall a = specCalls.get(i);
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
      AggFunctions.Fn fn = AggFunctions.of(name, argType, results[i], retractions, java8Time, i);
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
    return new AggsHandle(row, calls, distinct.stream().mapToInt(Integer::intValue).toArray(),
        java8Time);
  }

  /** The number of calls. */
  int size() {
    return calls.length;
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

  Accs decode(byte[] bytes) {
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

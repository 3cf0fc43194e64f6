package tableapi.serverext;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The {@code local_aggregate} relation: the local phase of a two-phase aggregation (Flink's
 * MiniBatchLocalGroupAggFunction), before the shuffle. Each task folds its rows of the
 * micro-batch (in bundles of at most {@code bundle_size} rows) into one partial accumulator per
 * group key and emits those: the rows the shuffle moves are a key's partials, one per task and
 * bundle, not its changes. {@link GroupAggregate} in two-phase mode merges them.
 *
 * <p>In: the aggregate's tagged union ({@code __k0..}, {@code __side}, [{@code __kind}, {@code
 * __seq}], {@code __in0}). Out: {@code __k0..}, {@code __side} (0), {@code __in0} (NULL: the
 * global operator reads its input row type from it) and {@code __acc}, the partial in the
 * operator's state format. Partials merge in any order, so no {@code __seq} is needed.
 */
final class LocalGroupAggregate implements MapPartitionsFunction<Row, Row> {
  private static final long serialVersionUID = 1L;

  private final GroupAggregate agg;
  private final int structAt; // __in0 in the output

  private LocalGroupAggregate(GroupAggregate agg, int structAt) {
    this.agg = agg;
    this.structAt = structAt;
  }

  /** The function over an input of schema {@code input}, for the aggregate spec. */
  static LocalGroupAggregate of(String specJson, StructType input, String timeZone,
      boolean java8Time) {
    GroupAggregate agg = GroupAggregate.of(
        new Operator.Request(Wire.read(specJson), input, timeZone, java8Time), true);
    return new LocalGroupAggregate(agg, agg.keyCount() + 1);
  }

  /** The partial rows' schema: the keys, {@code __side}, {@code __in0}, {@code __acc}. */
  static StructType output(StructType input, int keyCount) {
    List<StructField> fields = new ArrayList<>(Arrays.asList(input.fields()).subList(0, keyCount));
    fields.add(DataTypes.createStructField(Wire.SIDE, DataTypes.ByteType, false));
    StructField row = input.apply(Wire.INPUT_PREFIX + 0);
    fields.add(DataTypes.createStructField(row.name(), row.dataType(), true)); // NULL here
    fields.add(DataTypes.createStructField(GroupAggregate.ACC, DataTypes.BinaryType, false));
    return new StructType(fields.toArray(StructField[]::new));
  }

  /** {@code input.mapPartitions(local phase)} for the aggregate spec {@code specJson}. */
  static Dataset<Row> apply(Dataset<Row> input, String specJson, SQLConf conf) {
    LocalGroupAggregate fn = of(specJson, input.schema(), conf.sessionLocalTimeZone(),
        conf.datetimeJava8ApiEnabled());
    StructType out = output(input.schema(), fn.agg.keyCount());
    return input.mapPartitions(fn, Encoders.row(out));
  }

  @Override
  public Iterator<Row> call(Iterator<Row> rows) {
    agg.init();
    int keyCount = agg.keyCount();
    int bundleSize = agg.bundleSize();
    Map<Values.Tuple, GroupAggregate.Accs> partials = new LinkedHashMap<>();
    List<Row> out = new ArrayList<>();
    int n = 0;
    while (rows.hasNext()) {
      Row r = rows.next();
      Object[] key = new Object[keyCount];
      for (int i = 0; i < keyCount; i++) key[i] = r.get(i);
      partials.computeIfAbsent(new Values.Tuple(key), k -> agg.new Accs())
          .fold(agg.fields(r), agg.accumulates(r));
      if (++n == bundleSize) { // the bundle is full: its partials go, a new one starts
        flush(partials, out);
        n = 0;
      }
    }
    flush(partials, out);
    return out.iterator();
  }

  private void flush(Map<Values.Tuple, GroupAggregate.Accs> partials, List<Row> out) {
    for (Map.Entry<Values.Tuple, GroupAggregate.Accs> e : partials.entrySet()) {
      Object[] key = e.getKey().values;
      Object[] values = new Object[structAt + 2];
      System.arraycopy(key, 0, values, 0, key.length);
      values[key.length] = (byte) 0;
      values[structAt + 1] = agg.encode(e.getValue());
      out.add(RowFactory.create(values));
    }
    partials.clear();
  }
}

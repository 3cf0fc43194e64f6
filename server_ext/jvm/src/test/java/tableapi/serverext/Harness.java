package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.math.BigDecimal;
import java.sql.Timestamp;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder;
import org.apache.spark.sql.catalyst.encoders.RowEncoder;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import scala.Tuple2;
import scala.collection.immutable.ArraySeq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Runs the join functions over in-memory micro-batches, without Spark, the way
 * flatMapGroupsWithState calls them: one call per grouping key with data (rows handed over in
 * reverse, so the function must restore the {@code __seq} order), then one call per key whose
 * processing-time timeout passed. Driven from Python (tests/unit/server_ext/jvm_harness.py):
 *
 * <pre>
 *   java -cp jar:test-classes:pyspark/jars/* tableapi.serverext.Harness cases.json out.json
 *   cases: {"cases": [{"spec": spec_json, "left": struct JSON, "right": .., "keys": ..,
 *                      "batches": [{"now": ms, "rows": [{"key": [..], "side": 0|1,
 *                                   "kind": 0..3, "seq": n, "row": [..]}]}]}]}
 *   out:   {"results": [{"batches": [[["+I", v..], ..], ..], "state_keys": [n, ..]}
 *                       | {"error": "..."}]}
 * </pre>
 *
 * Schemas are StructType JSON (DDL would need Spark's SQL parser, slow to start). A case
 * with {@code "pairs": [[left row, right row], ..]} instead of batches evaluates the
 * spec's residual condition on each pair: {@code {"matches": [true, false, ..]}}.
 *
 * Values in JSON by type: numbers; DECIMAL as a string; STRING as text; BINARY as hex; DATE as
 * epoch days; TIMESTAMP / TIMESTAMP_NTZ as epoch micros; ARRAY and STRUCT as lists; MAP as a
 * list of [key, value]; NaN / Infinity floats as strings.
 */
public final class Harness {
  private static final String[] KINDS = {"+I", "-U", "+U", "-D"};
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private Harness() {}

  public static void main(String[] args) throws Exception {
    JsonNode cases = JSON.readTree(new File(args[0])).get("cases");
    ArrayNode results = NODES.arrayNode();
    for (JsonNode c : cases) {
      try {
        results.add(c.has("versions") ? versions(c)
            : c.has("timers") ? TimerCases.run(c)
            : c.has("pairs") ? conditions(c) : c.has("operator") ? runOperator(c) : run(c));
      } catch (RuntimeException e) {
        ObjectNode error = NODES.objectNode();
        error.put("error", e.toString());
        results.add(error);
      }
    }
    ObjectNode out = NODES.objectNode();
    out.set("results", results);
    JSON.writeValue(new File(args[1]), out);
  }

  /**
   * {@code {"versions": true}}: the plugin's relations and their wire versions, and the
   * grouped operators' names: {@code {"versions": {name: n, ..}, "operators": [name, ..]}};
   * with {@code "sent": [name, version]}, the plugin's check of that request first.
   */
  private static ObjectNode versions(JsonNode c) {
    if (c.has("sent")) {
      String name = c.get("sent").get(0).asText();
      OperatorPlugin.checkVersion(name, OperatorPlugin.relation(name).version(),
          c.get("sent").get(1).asInt());
    }
    ObjectNode versions = NODES.objectNode();
    OperatorPlugin.versions().forEach(versions::put);
    ArrayNode operators = NODES.arrayNode();
    new java.util.TreeSet<>(OperatorPlugin.OPERATORS.keySet()).forEach(operators::add);
    ObjectNode result = NODES.objectNode();
    result.set("versions", versions);
    result.set("operators", operators);
    return result;
  }

  private static ObjectNode run(JsonNode c) {
    String specJson = c.get("spec").asText();
    StructType left = schema(c, "left");
    StructType right = schema(c, "right");
    JoinSpec spec = Wire.joinSpec(specJson, left, right, "UTC", false);
    StructType keys = schema(c, "keys");
    // "insert_only": the union without __kind and __seq (every row +I, in arrival order).
    boolean insertOnly = c.path("insert_only").asBoolean(false);
    StructType input = keys.add(Wire.SIDE, DataTypes.ByteType);
    if (!insertOnly) {
      input = input.add(Wire.KIND, DataTypes.ByteType).add(Wire.SEQ, DataTypes.LongType);
    }
    input = input.add(Wire.LEFT_ROW, left).add(Wire.RIGHT_ROW, right);
    int rowAt = insertOnly ? 1 : 3; // __l's position after the keys
    JoinFunction fn = JoinFunction.of(spec, input);
    boolean timeouts = spec.hasTtl();

    Map<Values.Tuple, byte[]> states = new LinkedHashMap<>();
    Map<Values.Tuple, Long> timeoutAt = new LinkedHashMap<>();
    ArrayNode batches = NODES.arrayNode();
    ArrayNode stateKeys = NODES.arrayNode();
    for (JsonNode batch : c.get("batches")) {
      long now = batch.get("now").asLong();
      Map<Values.Tuple, List<Row>> groups = new LinkedHashMap<>();
      Map<Values.Tuple, Row> keyRows = new LinkedHashMap<>();
      for (JsonNode r : batch.get("rows")) {
        Object[] key = values(r.get("key"), keys);
        Values.Tuple k = new Values.Tuple(key);
        keyRows.putIfAbsent(k, new GenericRowWithSchema(key, keys));
        boolean isLeft = r.get("side").asInt() == 0;
        Row row = new GenericRowWithSchema(values(r.get("row"), isLeft ? left : right),
            isLeft ? left : right);
        Object[] wire = new Object[input.fields().length];
        System.arraycopy(key, 0, wire, 0, key.length);
        wire[key.length] = (byte) r.get("side").asInt();
        if (insertOnly && r.get("kind").asInt() != Wire.INSERT) {
          throw new IllegalArgumentException("an insert_only case holds a row that is not +I");
        }
        if (!insertOnly) {
          wire[key.length + 1] = (byte) r.get("kind").asInt();
          wire[key.length + 2] = r.get("seq").asLong();
        }
        wire[key.length + rowAt + (isLeft ? 0 : 1)] = row;
        Row wireRow = new GenericRowWithSchema(wire, input);
        groups.computeIfAbsent(k, x -> new ArrayList<>()).add(wireRow);
      }
      ArrayNode emitted = NODES.arrayNode();
      for (Map.Entry<Values.Tuple, List<Row>> g : groups.entrySet()) {
        List<Row> rows = new ArrayList<>(g.getValue());
        // The function must restore the __seq order; without __seq, arrival order is the order.
        if (!insertOnly) java.util.Collections.reverse(rows);
        call(fn, keyRows.get(g.getKey()), rows.iterator(), g.getKey(), false, now, timeouts,
            states, timeoutAt, emitted, spec.output);
      }
      for (Values.Tuple k : new ArrayList<>(timeoutAt.keySet())) {
        if (!groups.containsKey(k) && timeoutAt.get(k) < now) {
          call(fn, new GenericRowWithSchema(k.values, keys), java.util.Collections.emptyIterator(),
              k, true, now, timeouts, states, timeoutAt, emitted, spec.output);
        }
      }
      batches.add(emitted);
      stateKeys.add(states.size());
    }
    ObjectNode result = NODES.objectNode();
    result.set("batches", batches);
    result.set("state_keys", stateKeys);
    return result;
  }

  /**
   * A case of any operator: {@code {"operator": name, "spec": spec_json, "input": union
   * StructType, "key_count": n, "batches": [{"now": ms, "watermark": ms, "rows": [[every union
   * column's value], ..]}]}}. Per batch, as flatMapGroupsWithState runs it: one call per key
   * with data (rows reversed), then one per other key whose timeout passed (event time:
   * timeout < watermark; processing time: timeout < now). Out: per batch, per key (in call
   * order), the rows it emitted: {@code {"batches": [[[key, [rows..]], ..], ..]}}.
   */
  private static ObjectNode runOperator(JsonNode c) {
    StructType input = schema(c, "input");
    int keyCount = c.get("key_count").asInt();
    // "local": a two-phase aggregation: each batch's "tasks" (lists of union rows) go through
    // the local phase, task by task, and the operator gets their partial rows.
    // (a window aggregation's local phase groups by the keys and the slice: "local_key_count")
    LocalGroupAggregate local = null;
    if (c.path("local").asBoolean(false)) {
      local = LocalGroupAggregate.of(c.get("spec").asText(), input, "UTC", false);
      input = LocalGroupAggregate.output(input, c.path("local_key_count").asInt(keyCount));
    }
    Operator op = OperatorPlugin.operator(
        c.get("operator").asText(), c.get("spec").asText(), input, "UTC", false);
    StructType keys = new StructType(java.util.Arrays.copyOf(input.fields(), keyCount));
    boolean processing = op.timeout().equals(
        org.apache.spark.sql.streaming.GroupStateTimeout.ProcessingTimeTimeout());
    boolean event = op.timeout().equals(
        org.apache.spark.sql.streaming.GroupStateTimeout.EventTimeTimeout());
    boolean sequenced = List.of(input.fieldNames()).contains(Wire.SEQ);
    Map<Values.Tuple, byte[]> states = new LinkedHashMap<>();
    Map<Values.Tuple, Long> timeoutAt = new LinkedHashMap<>();
    ArrayNode batches = NODES.arrayNode();
    for (JsonNode batch : c.get("batches")) {
      long now = batch.get("now").asLong();
      long watermark = batch.has("watermark") ? batch.get("watermark").asLong() : -1;
      Map<Values.Tuple, List<Row>> groups = new LinkedHashMap<>();
      for (Row r : local == null ? rows(batch.get("rows"), input) : partials(local, c, batch)) {
        Object[] values = new Object[r.length()];
        for (int i = 0; i < values.length; i++) values[i] = r.get(i);
        Values.Tuple k = new Values.Tuple(java.util.Arrays.copyOf(values, keyCount));
        groups.computeIfAbsent(k, x -> new ArrayList<>()).add(r);
      }
      ArrayNode emitted = NODES.arrayNode();
      for (Map.Entry<Values.Tuple, List<Row>> g : groups.entrySet()) {
        List<Row> rows = new ArrayList<>(g.getValue());
        // The function must restore the __seq order; without __seq, arrival order is the order.
        if (sequenced) java.util.Collections.reverse(rows);
        callOperator(op, keys, g.getKey(), rows.iterator(), false, now, watermark, processing,
            event, states, timeoutAt, emitted);
      }
      for (Values.Tuple k : new ArrayList<>(timeoutAt.keySet())) {
        long at = timeoutAt.get(k);
        if (!groups.containsKey(k) && (event ? at < watermark : at < now)) {
          callOperator(op, keys, k, java.util.Collections.emptyIterator(), true, now, watermark,
              processing, event, states, timeoutAt, emitted);
        }
      }
      batches.add(emitted);
    }
    ObjectNode result = NODES.objectNode();
    result.set("batches", batches);
    result.put("state_keys", states.size());
    return result;
  }

  private static List<Row> rows(JsonNode rows, StructType schema) {
    List<Row> out = new ArrayList<>();
    for (JsonNode r : rows) out.add(new GenericRowWithSchema(values(r, schema), schema));
    return out;
  }

  /** The partial rows of a batch's tasks, task after task, each in its local phase's order. */
  private static List<Row> partials(LocalGroupAggregate local, JsonNode c, JsonNode batch) {
    StructType input = schema(c, "input");
    StructType out = LocalGroupAggregate.output(input,
        c.path("local_key_count").asInt(c.get("key_count").asInt()));
    // The operator runs over Spark's internal rows: the task's rows go in as Spark's encoder
    // makes them, the partials come out as it reads them back.
    ExpressionEncoder<Row> in = ExpressionEncoder.apply(RowEncoder.encoderFor(input));
    ExpressionEncoder.Serializer<Row> toInternal = in.createSerializer();
    ExpressionEncoder<Row> outEncoder = ExpressionEncoder.apply(RowEncoder.encoderFor(out));
    ExpressionEncoder.Deserializer<Row> toRow = outEncoder
        .resolveAndBind(outEncoder.resolveAndBind$default$1(),
            outEncoder.resolveAndBind$default$2())
        .createDeserializer();
    List<Row> partials = new ArrayList<>();
    for (JsonNode task : batch.get("tasks")) {
      List<org.apache.spark.sql.catalyst.InternalRow> internal = new ArrayList<>();
      for (Row r : rows(task, input)) internal.add(toInternal.apply(r).copy());
      Iterator<org.apache.spark.sql.catalyst.InternalRow> produced =
          local.processUnion(input, internal.iterator());
      while (produced.hasNext()) {
        Row r = toRow.apply(produced.next());
        Object[] values = new Object[r.length()];
        for (int i = 0; i < values.length; i++) values[i] = r.get(i);
        partials.add(new GenericRowWithSchema(values, out));
      }
    }
    return partials;
  }

  private static void callOperator(Operator op, StructType keys, Values.Tuple k,
      Iterator<Row> rows, boolean timedOut, long now, long watermark, boolean processing,
      boolean event, Map<Values.Tuple, byte[]> states, Map<Values.Tuple, Long> timeoutAt,
      ArrayNode emitted) {
    MemoryGroupState state =
        new MemoryGroupState(states.get(k), timedOut, now, processing, event, watermark);
    Row key = new GenericRowWithSchema(k.values, keys);
    Iterator<Row> out = callKeeping(op.fn(), key, rows, k, state, states, timeoutAt);
    ArrayNode keyed = NODES.arrayNode();
    for (int i = 0; i < keys.fields().length; i++) {
      keyed.add(toJson(k.values[i], keys.fields()[i].dataType()));
    }
    ArrayNode produced = NODES.arrayNode();
    while (out.hasNext()) produced.add(toJsonAny(out.next(), op.output()));
    if (!produced.isEmpty()) emitted.add(NODES.arrayNode().add(keyed).add(produced));
  }

  /**
   * One flatMapGroupsWithState call of {@code fn} for key {@code k}, then what it left: the
   * key's state value and timeout (both gone when unset, as Spark's GroupStateImpl resets them).
   */
  private static Iterator<Row> callKeeping(
      FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> fn,
      Row key,
      Iterator<Row> rows,
      Values.Tuple k,
      MemoryGroupState state,
      Map<Values.Tuple, byte[]> states,
      Map<Values.Tuple, Long> timeoutAt) {
    Iterator<Row> out;
    try {
      out = fn.call(key, rows, state);
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
    if (state.value() == null) {
      states.remove(k);
    } else {
      states.put(k, state.value());
    }
    if (state.timeoutAt >= 0) {
      timeoutAt.put(k, state.timeoutAt);
    } else {
      timeoutAt.remove(k);
    }
    return out;
  }

  /** An output row with its kind as a name ({@code LATE} for the temporal join's 9). */
  private static ArrayNode toJsonAny(Row row, StructType output) {
    ArrayNode a = NODES.arrayNode();
    byte kind = row.getByte(0);
    a.add(kind == TemporalJoin.LATE ? "LATE" : KINDS[kind]);
    for (int i = 1; i < output.fields().length; i++) {
      a.add(toJson(row.get(i), output.fields()[i].dataType()));
    }
    return a;
  }

  private static ObjectNode conditions(JsonNode c) {
    String specJson = c.get("spec").asText();
    StructType left = schema(c, "left");
    StructType right = schema(c, "right");
    JoinSpec spec = Wire.joinSpec(specJson, left, right, "UTC", false);
    Condition condition = Condition.compile(spec.residualJson, spec.timeZone);
    ArrayNode matches = NODES.arrayNode();
    for (JsonNode pair : c.get("pairs")) {
      Object[] l = values(pair.get(0), left);
      Object[] r = values(pair.get(1), right);
      try {
        matches.add(condition.test(l, r));
      } catch (RuntimeException e) {
        matches.add("error: " + e.getMessage());
      }
    }
    ObjectNode result = NODES.objectNode();
    result.set("matches", matches);
    return result;
  }

  private static StructType schema(JsonNode c, String name) {
    JsonNode schema = c.get(name);
    return (StructType) DataType.fromJson(schema.isTextual() ? schema.asText() : schema.toString());
  }

  private static void call(
      JoinFunction fn,
      Row key,
      Iterator<Row> rows,
      Values.Tuple k,
      boolean timedOut,
      long now,
      boolean timeouts,
      Map<Values.Tuple, byte[]> states,
      Map<Values.Tuple, Long> timeoutAt,
      ArrayNode emitted,
      StructType output) {
    MemoryGroupState state = new MemoryGroupState(states.get(k), timedOut, now, timeouts);
    Iterator<Row> out = callKeeping(fn, key, rows, k, state, states, timeoutAt);
    while (out.hasNext()) emitted.add(toJson(out.next(), output));
  }

  private static ArrayNode toJson(Row row, StructType output) {
    ArrayNode a = NODES.arrayNode();
    a.add(KINDS[row.getByte(0)]);
    for (int i = 1; i < output.fields().length; i++) {
      a.add(toJson(row.get(i), output.fields()[i].dataType()));
    }
    return a;
  }

  private static Object[] values(JsonNode list, StructType schema) {
    StructField[] fields = schema.fields();
    Object[] out = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) out[i] = fromJson(list.get(i), fields[i].dataType());
    return out;
  }

  static Object fromJson(JsonNode v, DataType t) {
    if (v == null || v.isNull()) return null;
    if (t instanceof BooleanType) return v.asBoolean();
    if (t instanceof ByteType) return (byte) v.asInt();
    if (t instanceof ShortType) return (short) v.asInt();
    if (t instanceof IntegerType) return v.asInt();
    if (t instanceof LongType) return v.asLong();
    if (t instanceof FloatType) return (float) asDouble(v);
    if (t instanceof DoubleType) return asDouble(v);
    if (t instanceof DecimalType d) return new BigDecimal(v.asText()).setScale(d.scale());
    if (t instanceof StringType) return v.asText();
    if (t instanceof BinaryType) return HexFormat.of().parseHex(v.asText());
    if (t instanceof DateType) return DateTimeUtils.toJavaDate(v.asInt());
    if (t instanceof TimestampType) return DateTimeUtils.toJavaTimestamp(v.asLong());
    if (t instanceof TimestampNTZType) return DateTimeUtils.microsToLocalDateTime(v.asLong());
    if (t instanceof ArrayType a) {
      Object[] items = new Object[v.size()];
      for (int i = 0; i < items.length; i++) items[i] = fromJson(v.get(i), a.elementType());
      return ArraySeq.unsafeWrapArray(items);
    }
    if (t instanceof MapType m) {
      Map<Object, Object> map = new LinkedHashMap<>();
      for (JsonNode e : v) {
        map.put(fromJson(e.get(0), m.keyType()), fromJson(e.get(1), m.valueType()));
      }
      return CollectionConverters.asScala(map);
    }
    if (t instanceof StructType s) return new GenericRowWithSchema(values(v, s), s);
    throw new IllegalArgumentException("the harness has no JSON form for " + t.sql());
  }

  private static double asDouble(JsonNode v) {
    return v.isTextual() ? Double.parseDouble(v.asText()) : v.asDouble();
  }

  static JsonNode toJson(Object v, DataType t) {
    if (v == null) return NODES.nullNode();
    if (t instanceof BooleanType) return NODES.booleanNode((Boolean) v);
    if (t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType
        || t instanceof LongType) {
      return NODES.numberNode(((Number) v).longValue());
    }
    if (t instanceof FloatType || t instanceof DoubleType) {
      double d = ((Number) v).doubleValue();
      return Double.isFinite(d) ? NODES.numberNode(d) : NODES.textNode(Double.toString(d));
    }
    if (t instanceof DecimalType) return NODES.textNode(((BigDecimal) v).toPlainString());
    if (t instanceof StringType) return NODES.textNode((String) v);
    if (t instanceof BinaryType) return NODES.textNode(HexFormat.of().formatHex((byte[]) v));
    if (t instanceof DateType) {
      return NODES.numberNode(DateTimeUtils.fromJavaDate((java.sql.Date) v));
    }
    if (t instanceof TimestampType) {
      return NODES.numberNode(DateTimeUtils.fromJavaTimestamp((Timestamp) v));
    }
    if (t instanceof TimestampNTZType) {
      return NODES.numberNode(DateTimeUtils.localDateTimeToMicros((LocalDateTime) v));
    }
    if (t instanceof ArrayType a) {
      ArrayNode out = NODES.arrayNode();
      scala.collection.Iterator<?> it = ((scala.collection.Seq<?>) v).iterator();
      while (it.hasNext()) out.add(toJson(it.next(), a.elementType()));
      return out;
    }
    if (t instanceof MapType m) {
      ArrayNode out = NODES.arrayNode();
      scala.collection.Map<?, ?> map = (scala.collection.Map<?, ?>) v;
      for (scala.collection.Iterator<? extends Tuple2<?, ?>> it = map.iterator(); it.hasNext(); ) {
        Tuple2<?, ?> e = it.next();
        ArrayNode pair = NODES.arrayNode().add(toJson(e._1(), m.keyType()));
        out.add(pair.add(toJson(e._2(), m.valueType())));
      }
      return out;
    }
    if (t instanceof StructType s) {
      Row r = (Row) v;
      ArrayNode out = NODES.arrayNode();
      for (int i = 0; i < s.fields().length; i++) {
        out.add(toJson(r.get(i), s.fields()[i].dataType()));
      }
      return out;
    }
    throw new IllegalArgumentException("the harness has no JSON form for " + t.sql());
  }
}

package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.EventTimeWatermark;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.RelationPlugin;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.sparkproject.connect.protobuf.Any;
import org.sparkproject.connect.protobuf.CodedInputStream;

/**
 * The Spark Connect relation plugin ({@code spark.connect.extensions.relation.classes}) that
 * turns the client's extension relation into a JVM join operator:
 *
 * <pre>
 *   union.groupBy(__k0, ...).as(row(keys), row(union))
 *        .flatMapGroupsWithState(JoinFunction, Append, BINARY, row(output), timeout)
 * </pre>
 *
 * with one binary state value per key (both sides' rows), and a processing-time timeout only
 * when a side has a state TTL. The other operators the same way: {@code temporal} (event-time
 * timeouts for versioned tables), {@code interval} (event-time timeouts) and {@code multi}
 * (the multi-way join). {@code position} numbers a scan's rows in reading order ({@link
 * Positions}). Relations of other type URLs are left to other plugins.
 */
public final class JoinPlugin implements RelationPlugin {
  private static final int RECURSION_LIMIT = 4096;

  @Override
  public Optional<LogicalPlan> transform(byte[] relation, SparkConnectPlanner planner) {
    Any any;
    try { // the whole serialized Any arrives, not just its value
      CodedInputStream in = CodedInputStream.newInstance(relation);
      in.setRecursionLimit(RECURSION_LIMIT);
      any = Any.parseFrom(in);
    } catch (IOException e) {
      throw new UncheckedIOException("malformed extension relation", e);
    }
    if (!Wire.TYPE_URL.equals(any.getTypeUrl())) return Optional.empty();
    Wire.Request request = Wire.parsePayload(any.getValue());
    SparkSession session = planner.session();
    return switch (request.operator()) {
      case "probe" -> Optional.of(session.range(1).selectExpr("1 AS " + Wire.PROBE_COLUMN)
          .logicalPlan());
      case "join", "temporal", "interval", "multi" -> {
        Dataset<Row> input = Dataset.ofRows(session, planner.transformRelation(request.input()));
        SQLConf conf = session.sessionState().conf();
        yield Optional.of(run(input, request.operator(), request.specJson(), conf).logicalPlan());
      }
      case "position" -> {
        Dataset<Row> input = Dataset.ofRows(session, planner.transformRelation(request.input()));
        yield Optional.of(Positions.withPosition(input, request.specJson()).logicalPlan());
      }
      default -> throw new IllegalArgumentException(
          "unknown server_ext JVM operator " + request.operator());
    };
  }

  /** An operator function with its output schema and the timeout conf it runs with. */
  record Operator(
      FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> fn,
      StructType output,
      GroupStateTimeout timeout) {}

  /**
   * The operator {@code name} ({@code join}, {@code temporal}, {@code interval}, {@code multi})
   * for its spec over a union of schema {@code input}; bad specs fail here, at plan time.
   */
  static Operator operator(
      String name, String specJson, StructType input, String timeZone, boolean java8Time) {
    JsonNode root = Wire.read(specJson);
    return switch (name) {
      case "join" -> {
        JoinSpec spec = twoInput(input, root, "join", timeZone, java8Time, false);
        yield new Operator(JoinFunction.of(spec, input), spec.output,
            spec.hasTtl() ? GroupStateTimeout.ProcessingTimeTimeout()
                : GroupStateTimeout.NoTimeout());
      }
      case "temporal" -> {
        JoinSpec spec = twoInput(input, root, "temporal", timeZone, java8Time, true);
        boolean event = root.get("temporal").get("time").asText().equals("event");
        if (!spec.kind.equals("inner") && !spec.kind.equals("left")) {
          throw new IllegalArgumentException("a temporal join is inner or left, got " + spec.kind);
        }
        yield new Operator(new TemporalJoin(spec, event, input), spec.output,
            event ? GroupStateTimeout.EventTimeTimeout() : GroupStateTimeout.NoTimeout());
      }
      case "interval" -> {
        JoinSpec spec = twoInput(input, root, "interval", timeZone, java8Time, true);
        if (spec.semiOrAnti()) {
          throw new IllegalArgumentException("an interval join is not semi or anti: " + spec.kind);
        }
        JsonNode section = root.get("interval");
        yield new Operator(new IntervalJoin(spec, section.get("lower_ms").asLong(),
            section.get("upper_ms").asLong(), input), spec.output,
            GroupStateTimeout.EventTimeTimeout());
      }
      case "multi" -> multi(input, root, timeZone, java8Time);
      default -> throw new IllegalArgumentException("unknown server_ext JVM operator " + name);
    };
  }

  /** The multi-way join of a tagged union of N inputs ({@code __in0..}). */
  private static Operator multi(StructType schema, JsonNode root, String timeZone,
      boolean java8Time) {
    JsonNode multi = root.get("multi");
    int n = multi.get("inputs").size();
    StructType[] inputs = new StructType[n];
    int width = 0;
    for (int i = 0; i < n; i++) {
      inputs[i] = struct(schema, Wire.INPUT_PREFIX + i);
      RowCodec.check(inputs[i]);
      if (multi.get("inputs").get(i).size() != inputs[i].fields().length) {
        throw new IllegalArgumentException("input " + i + " has " + inputs[i].fields().length
            + " fields but the spec declares " + multi.get("inputs").get(i).size());
      }
      width += inputs[i].fields().length;
    }
    boolean[] outer = new boolean[n - 1];
    String[] conditions = new String[n - 1];
    for (int i = 0; i < n - 1; i++) {
      outer[i] = multi.get("kinds").get(i).asText().equals("left");
      JsonNode tree = multi.get("conditions").get(i);
      conditions[i] = tree == null || tree.isNull() ? null : tree.toString();
      Condition.compile(conditions[i], timeZone);
    }
    JsonNode ttl = multi.get("ttl_ms");
    long ttlMs = ttl == null || ttl.isNull() ? -1 : ttl.asLong();
    StructType output = (StructType) DataType.fromJson(root.get("output").toString());
    if (output.fields().length != 1 + width) {
      throw new IllegalArgumentException("the output schema has " + output.fields().length
          + " columns but the multi-way join gives " + (1 + width));
    }
    MultiJoin fn = new MultiJoin(inputs, outer, conditions, ttlMs, timeZone, java8Time, schema);
    return new Operator(fn, output,
        fn.hasTtl() ? GroupStateTimeout.ProcessingTimeTimeout() : GroupStateTimeout.NoTimeout());
  }

  /** A two-input spec over the union's {@code __l} / {@code __r} (and {@code __t}), checked. */
  private static JoinSpec twoInput(StructType schema, JsonNode root, String section,
      String timeZone, boolean java8Time, boolean timed) {
    StructType left = struct(schema, Wire.LEFT_ROW);
    StructType right = struct(schema, Wire.RIGHT_ROW);
    if (timed && !List.of(schema.fieldNames()).contains(Wire.TIME)) {
      throw new IllegalArgumentException("the " + section + " join needs the union's " + Wire.TIME
          + " column; its input has " + List.of(schema.fieldNames()));
    }
    JoinSpec spec = Wire.twoInputSpec(root, section, left, right, timeZone, java8Time);
    RowCodec.check(left);
    RowCodec.check(right);
    checkOutput(spec);
    Condition.compile(spec.residualJson, spec.timeZone); // a bad tree fails here, not in a task
    return spec;
  }

  /** {@code input.groupBy(keys).as(..).flatMapGroupsWithState(fn, Append, BINARY, ..)}. */
  static Dataset<Row> run(Dataset<Row> input, String name, String specJson, SQLConf conf) {
    Operator op = operator(name, specJson, input.schema(), conf.sessionLocalTimeZone(),
        conf.datetimeJava8ApiEnabled());
    if (op.timeout().equals(GroupStateTimeout.EventTimeTimeout())) {
      input = withEventTimeMarker(input); // a last column: the operator's indexes stay
    }
    StructType schema = input.schema();
    List<String> keys = Wire.keyNames(specJson);
    Column[] columns = keys.stream().map(input::col).toArray(Column[]::new);
    StructType keySchema =
        new StructType(keys.stream().map(schema::apply).toArray(StructField[]::new));
    return input
        .groupBy(columns)
        .as(Encoders.row(keySchema), Encoders.row(schema))
        .flatMapGroupsWithState(
            op.fn(), OutputMode.Append(), Encoders.BINARY(), Encoders.row(op.output()),
            op.timeout());
  }

  /**
   * The union plus {@link #EVENT_TIME_MARKER}: a column marked as an event-time column (which
   * Spark's checker wants to see below an event-time timeout) whose value is never behind the
   * watermark, so that Spark drops no row as late before the operator: the operator itself
   * decides what is late (the temporal join reports late probe rows). The union's own columns
   * carry no watermark marker (the times travel as epoch millis in {@code __t}).
   */
  static Dataset<Row> withEventTimeMarker(Dataset<Row> input) {
    Metadata marker =
        new MetadataBuilder().putLong(EventTimeWatermark.delayKey(), 0L).build();
    Column never = functions.lit(java.sql.Timestamp.valueOf("9999-12-31 00:00:00"));
    return input.withColumn(EVENT_TIME_MARKER, never.as(EVENT_TIME_MARKER, marker));
  }

  static final String EVENT_TIME_MARKER = "__event_time_marker";

  private static StructType struct(StructType schema, String name) {
    if (!List.of(schema.fieldNames()).contains(name)) {
      throw new IllegalArgumentException(
          "the server_ext JVM join needs the tagged union (__k0.., __side, [__kind, __seq,]"
              + " __l, __r); its input has " + List.of(schema.fieldNames()));
    }
    if (!(schema.apply(name).dataType() instanceof StructType s)) {
      throw new IllegalArgumentException(name + " must be a struct column");
    }
    return s;
  }

  /** The output fields must have the types of the fields the operator copies into them. */
  private static void checkOutput(JoinSpec spec) {
    StructField[] out = spec.output.fields();
    StructField[] l = spec.left.schema().fields();
    StructField[] r = spec.right.schema().fields();
    for (int i = 1; i < out.length; i++) {
      StructField from = i - 1 < l.length ? l[i - 1] : r[i - 1 - l.length];
      if (!DataType.equalsStructurally(from.dataType(), out[i].dataType(), true)) {
        throw new IllegalArgumentException(
            "output column `" + out[i].name() + "` is " + out[i].dataType().sql()
                + " but the input field `" + from.name() + "` it comes from is "
                + from.dataType().sql());
      }
    }
  }
}

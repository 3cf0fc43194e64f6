package tableapi.serverext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
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
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.sparkproject.connect.protobuf.Any;
import org.sparkproject.connect.protobuf.CodedInputStream;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The Spark Connect relation plugin ({@code spark.connect.extensions.relation.classes}) that
 * turns the client's extension relation into a JVM operator of {@link #OPERATORS}:
 *
 * <pre>
 *   union.groupBy(__k0, ...).as(row(keys), row(union))
 *        .flatMapGroupsWithState(JoinFunction, Append, BINARY, row(output), timeout)
 * </pre>
 *
 * with one binary state value per key, and the timeout its {@link Operator} asks for. Five
 * relations are not grouped operators: {@code probe} (is the plugin there, which wire
 * version?), {@code executors} (the driver's registered executors, {@link #executors}),
 * {@code position} (numbers a scan's rows in reading order, {@link Positions}), {@code
 * file_time} (each row's file's modification time in nanoseconds, {@link FileTimes}) and
 * {@code local_aggregate} (a two-phase aggregation's local phase, {@link
 * LocalGroupAggregate}).
 * Relations of other type URLs are left to other plugins.
 */
public class OperatorPlugin implements RelationPlugin {
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
      case "executors" -> Optional.of(executors(session).logicalPlan());
      case "unseen_retractions" -> Optional.of(unseenRetractions(session).logicalPlan());
      case "position" -> {
        Dataset<Row> input = Dataset.ofRows(session, planner.transformRelation(request.input()));
        yield Optional.of(Positions.withPosition(input, request.specJson()).logicalPlan());
      }
      case "file_time" -> {
        Dataset<Row> input = Dataset.ofRows(session, planner.transformRelation(request.input()));
        yield Optional.of(FileTimes.withFileTime(input, request.specJson()).logicalPlan());
      }
      case "local_aggregate" -> {
        Dataset<Row> input = Dataset.ofRows(session, planner.transformRelation(request.input()));
        yield Optional.of(
            LocalGroupAggregate.apply(input, request.specJson(), session).logicalPlan());
      }
      default -> {
        Dataset<Row> input = Dataset.ofRows(session, planner.transformRelation(request.input()));
        SQLConf conf = session.sessionState().conf();
        yield Optional.of(run(input, request.operator(), request.specJson(), conf).logicalPlan());
      }
    };
  }

  /**
   * One row ({@code executor_id}) per executor the driver has registered, the driver itself
   * not counted: what a check of the executors' Python must hear from (none on a local
   * master). Read when the relation is planned, so a client's spec should differ per call
   * (Spark Connect may cache the plan of a relation it has seen).
   */
  static Dataset<Row> executors(SparkSession session) {
    List<Row> rows = new ArrayList<>();
    for (String id : CollectionConverters.asJava(session.sparkContext().getExecutorIds())) {
      rows.add(RowFactory.create(id));
    }
    StructType schema = new StructType().add("executor_id", DataTypes.StringType, false);
    return session.createDataFrame(rows, schema);
  }

  /**
   * One row ({@code operator}, {@code dropped}) per operator kind that dropped retractions of
   * rows it held no state for in the driver's JVM ({@link UnseenRetractions}): every operator
   * on a local master. Read when planned, as {@link #executors}.
   */
  static Dataset<Row> unseenRetractions(SparkSession session) {
    List<Row> rows = new ArrayList<>();
    UnseenRetractions.counts().forEach((k, v) -> rows.add(RowFactory.create(k, v)));
    StructType schema = new StructType()
        .add("operator", DataTypes.StringType, false)
        .add("dropped", DataTypes.LongType, false);
    return session.createDataFrame(rows, schema);
  }

  /**
   * The grouped operators by their wire name: one line per operator (the client's twin is
   * {@code server_ext/operators.py}'s registry of spec classes).
   */
  static final Map<String, Operator.Factory> OPERATORS = Map.of(
      "join", JoinFunction::create,
      "temporal", TemporalJoin::create,
      "interval", IntervalJoin::create,
      "multi", MultiJoin::create,
      "aggregate", GroupAggregate::create);

  /**
   * The operator {@code name} (a key of {@link #OPERATORS}) for its spec over a union of
   * schema {@code input}; bad specs fail here, at plan time.
   */
  static Operator operator(
      String name, String specJson, StructType input, String timeZone, boolean java8Time) {
    Operator.Factory factory = OPERATORS.get(name);
    if (factory == null) {
      throw new IllegalArgumentException("unknown server_ext JVM operator " + name
          + "; this plugin runs " + new java.util.TreeSet<>(OPERATORS.keySet())
          + ": install the same flink-tableapi-spark version on the client and the server");
    }
    return factory.create(new Operator.Request(Wire.read(specJson), input, timeZone, java8Time));
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
}

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
 * with one binary state value per key, and the timeout its {@link Operator} asks for, or into
 * one of the {@link #RELATIONS} that are not grouped operators. Every relation has a version
 * of its own on the wire (the client's twin: {@code operator_versions()} of {@code
 * server_ext/operators.py}); a mismatch fails naming the relation, both versions and the fix.
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
    Relation found = relation(request.operator());
    checkVersion(request.operator(), found.version(), request.operatorVersion());
    return Optional.of(found.handler().plan(request, planner));
  }

  /** A relation the plugin makes: its version on the wire and how it is planned. */
  record Relation(int version, Handler handler) {}

  /** Plans a request's relation. */
  @FunctionalInterface
  interface Handler {
    LogicalPlan plan(Wire.Request request, SparkConnectPlanner planner);
  }

  /** A grouped operator: its version on the wire and its factory. */
  record Grouped(int version, Operator.Factory factory) {}

  /**
   * The grouped operators by their wire name: one line per operator (the client's twin is
   * {@code server_ext/operators.py}'s registry of spec classes, each with its {@code version}).
   * Bump an operator's version, here and in its spec class, when its spec or its state format
   * changes.
   */
  static final Map<String, Grouped> OPERATORS = Map.of(
      "join", new Grouped(1, JoinFunction::create),
      "temporal", new Grouped(1, TemporalJoin::create),
      "interval", new Grouped(1, IntervalJoin::create),
      "multi", new Grouped(1, MultiJoin::create),
      "aggregate", new Grouped(1, GroupAggregate::create),
      "window_aggregate", new Grouped(3, WindowAggregate::create),
      "window_join", new Grouped(1, WindowJoin::create),
      "window_rank", new Grouped(1, WindowRank::create));

  /**
   * The relations that are not grouped operators, by wire name: {@code probe} (is the plugin
   * there, which wire version?), {@code executors} ({@link #executors}), {@code
   * unseen_retractions} ({@link #unseenRetractions}), {@code position} (numbers a scan's rows
   * in reading order, {@link Positions}), {@code file_time} (each row's file's modification
   * time in nanoseconds, {@link FileTimes}) and {@code local_aggregate} (a two-phase
   * aggregation's local phase, {@link LocalGroupAggregate}; the aggregate's version: its
   * partials are the aggregate's state format), {@code local_window_aggregate} (the same for a
   * two-phase window aggregation, per key and slice; the window aggregate's version).
   */
  static final Map<String, Relation> RELATIONS = Map.of(
      "probe", new Relation(1, (request, planner) ->
          planner.session().range(1).selectExpr("1 AS " + Wire.PROBE_COLUMN).logicalPlan()),
      "executors", new Relation(1, (request, planner) ->
          executors(planner.session()).logicalPlan()),
      "unseen_retractions", new Relation(1, (request, planner) ->
          unseenRetractions(planner.session()).logicalPlan()),
      "position", new Relation(1, (request, planner) ->
          Positions.withPosition(input(request, planner), request.specJson()).logicalPlan()),
      "file_time", new Relation(1, (request, planner) ->
          FileTimes.withFileTime(input(request, planner), request.specJson()).logicalPlan()),
      "local_aggregate", new Relation(OPERATORS.get("aggregate").version(), (request, planner) ->
          LocalGroupAggregate.apply(input(request, planner), request.specJson(),
              planner.session()).logicalPlan()),
      "local_window_aggregate", new Relation(OPERATORS.get("window_aggregate").version(),
          (request, planner) -> LocalGroupAggregate.apply(input(request, planner),
              request.specJson(), planner.session()).logicalPlan()));

  /** The relation of wire name {@code name}: a grouped operator, or one of {@link #RELATIONS}. */
  static Relation relation(String name) {
    Grouped grouped = OPERATORS.get(name);
    if (grouped != null) {
      return new Relation(grouped.version(), (request, planner) -> {
        SQLConf conf = planner.session().sessionState().conf();
        return run(input(request, planner), name, request.specJson(), conf).logicalPlan();
      });
    }
    Relation relation = RELATIONS.get(name);
    if (relation == null) {
      throw new IllegalArgumentException("unknown server_ext JVM operator " + name
          + "; this plugin runs " + versions().keySet() + ": " + Wire.VERSION_FIX);
    }
    return relation;
  }

  /** Every relation's version by wire name (the twin of the client's operator_versions()). */
  static java.util.SortedMap<String, Integer> versions() {
    java.util.SortedMap<String, Integer> out = new java.util.TreeMap<>();
    OPERATORS.forEach((name, op) -> out.put(name, op.version()));
    RELATIONS.forEach((name, r) -> out.put(name, r.version()));
    return out;
  }

  /** Fails unless the client sent the version of {@code name} this plugin runs. */
  static void checkVersion(String name, int plugin, int client) {
    if (plugin != client) {
      throw new IllegalArgumentException("server_ext JVM operator " + name + ": the plugin runs "
          + "version " + plugin + " but the client sent "
          + (client < 0 ? "none" : "version " + client) + ": " + Wire.VERSION_FIX);
    }
  }

  /** The request's input relation, planned. */
  private static Dataset<Row> input(Wire.Request request, SparkConnectPlanner planner) {
    return Dataset.ofRows(planner.session(), planner.transformRelation(request.input()));
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
   * The operator {@code name} (a key of {@link #OPERATORS}) for its spec over a union of
   * schema {@code input}; bad specs fail here, at plan time.
   */
  static Operator operator(
      String name, String specJson, StructType input, String timeZone, boolean java8Time) {
    return operator(name, Specs.Envelope.parse(specJson), input, timeZone, java8Time);
  }

  private static Operator operator(
      String name, Specs.Envelope spec, StructType input, String timeZone, boolean java8Time) {
    Grouped grouped = OPERATORS.get(name);
    if (grouped == null) relation(name); // unknown: fails naming the relations there are
    return grouped.factory().create(new Operator.Request(spec, input, timeZone, java8Time));
  }

  /** {@code input.groupBy(keys).as(..).flatMapGroupsWithState(fn, Append, BINARY, ..)}. */
  static Dataset<Row> run(Dataset<Row> input, String name, String specJson, SQLConf conf) {
    Specs.Envelope spec = Specs.Envelope.parse(specJson); // once: the operator and its keys
    Operator op = operator(name, spec, input.schema(), conf.sessionLocalTimeZone(),
        conf.datetimeJava8ApiEnabled());
    if (op.timeout().equals(GroupStateTimeout.EventTimeTimeout())) {
      input = withEventTimeMarker(input); // a last column: the operator's indexes stay
    }
    StructType schema = input.schema();
    List<String> keys = spec.keys();
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

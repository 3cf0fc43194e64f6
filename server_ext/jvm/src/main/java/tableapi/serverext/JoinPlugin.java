package tableapi.serverext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.RelationPlugin;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.types.DataType;
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
 * when a side has a state TTL. Relations of other type URLs are left to other plugins.
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
      case "join" -> {
        Dataset<Row> input = Dataset.ofRows(session, planner.transformRelation(request.input()));
        yield Optional.of(join(input, request.specJson(), session.sessionState().conf())
            .logicalPlan());
      }
      default -> throw new IllegalArgumentException(
          "unknown server_ext JVM operator " + request.operator());
    };
  }

  /** The join of a tagged union, as a Dataset of {@code __kind} + the output fields. */
  static Dataset<Row> join(Dataset<Row> input, String specJson, SQLConf conf) {
    StructType schema = input.schema();
    StructType left = struct(schema, Wire.LEFT_ROW);
    StructType right = struct(schema, Wire.RIGHT_ROW);
    JoinSpec spec = Wire.joinSpec(
        specJson, left, right, conf.sessionLocalTimeZone(), conf.datetimeJava8ApiEnabled());
    RowCodec.check(left);
    RowCodec.check(right);
    checkOutput(spec);
    Condition.compile(spec.residualJson, spec.timeZone); // a bad tree fails here, not in a task
    List<String> keys = Wire.keyNames(specJson);
    Column[] columns = keys.stream().map(input::col).toArray(Column[]::new);
    StructType keySchema =
        new StructType(keys.stream().map(schema::apply).toArray(StructField[]::new));
    return input
        .groupBy(columns)
        .as(Encoders.row(keySchema), Encoders.row(schema))
        .flatMapGroupsWithState(
            JoinFunction.of(spec, schema),
            OutputMode.Append(),
            Encoders.BINARY(),
            Encoders.row(spec.output),
            spec.hasTtl()
                ? GroupStateTimeout.ProcessingTimeTimeout()
                : GroupStateTimeout.NoTimeout());
  }

  private static StructType struct(StructType schema, String name) {
    if (!List.of(schema.fieldNames()).contains(name)) {
      throw new IllegalArgumentException(
          "the server_ext JVM join needs the tagged union (__k0.., __side, __kind, __seq, __l,"
              + " __r); its input has " + List.of(schema.fieldNames()));
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

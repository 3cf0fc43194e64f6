package tableapi.serverext;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.sql.types.StructType;
import org.sparkproject.connect.protobuf.ByteString;
import org.sparkproject.connect.protobuf.CodedInputStream;

/**
 * The wire contract between the Python client and this plugin: the one place on the JVM side
 * (its Python twin is {@code server_ext/jvm/wire.py}; both change together, with
 * {@link #VERSION} for the envelope and the relation's own version, {@link
 * OperatorPlugin#RELATIONS}, for its spec).
 *
 * <p>An extension {@code Relation} whose {@code Any} has type URL {@link #TYPE_URL} carries a
 * payload, hand-encoded protobuf:
 *
 * <pre>
 *   message JvmOperator {
 *     uint32   wire_version = 1;   // VERSION
 *     string   operator     = 2;   // "join", "temporal", "interval", "multi", "aggregate",
 *                                 // "position" (spec: the new column's name),
 *                                 // "local_aggregate", "executors" or "probe"
 *     Relation input        = 3;   // the tagged union: __k0.., __side, __kind, __seq, __l, __r
 *     string   spec_json    = 4;   // {"keys": [...], "output": StructType JSON, "join": JoinSpec}
 *     uint32   operator_version = 5;  // the version of this operator's spec and state format
 *   }
 * </pre>
 *
 * <p>Two versions: {@link #VERSION} is the envelope's (this message, the union's columns),
 * checked first; {@code operator_version} is the relation's own ({@link
 * OperatorPlugin#RELATIONS}), so that a change of one operator's spec or state format bumps
 * only that operator's. The spec JSON is parsed into typed records in {@link Specs}.
 *
 * <p>A union of insert-only inputs may leave out {@code __kind} and {@code __seq}: its rows are
 * all +I, taken in arrival order.
 *
 * <p>{@code join} is the client's {@code server_ext.joins.spec.JoinSpec} as JSON (fields of each
 * side as [name, DDL type], input_spec, unique_key, ttl_ms, null_safe, residual tree,
 * output_names); {@link Condition} documents the residual tree's JSON form.
 */
public final class Wire {
  public static final String TYPE_URL = "type.googleapis.com/tableapi.serverext.JvmOperator";
  // 2: __kind and __seq may be left out; 3: position; 4: local_aggregate; 5: executors;
  // 6: file_time, unseen_retractions; 7: operator_version (each relation's own version)
  public static final int VERSION = 7;
  /** The probe's answer: a relation with one column of this name. */
  public static final String PROBE_COLUMN = "tableapi_jvm_wire_" + VERSION;

  // Input columns (server_ext/joins/spec.py).
  public static final String KEY_PREFIX = "__k";
  public static final String SIDE = "__side";
  public static final String KIND = "__kind";
  public static final String SEQ = "__seq";
  public static final String LEFT_ROW = "__l";
  public static final String RIGHT_ROW = "__r";
  public static final String TIME = "__t"; // temporal and interval joins: the row's epoch millis
  public static final String INPUT_PREFIX = "__in"; // the multi-way join's struct columns

  // Flink's RowKind bytes.
  public static final byte INSERT = 0;
  public static final byte UPDATE_BEFORE = 1;
  public static final byte UPDATE_AFTER = 2;
  public static final byte DELETE = 3;
  public static final byte LEFT = 0;

  private static final int RECURSION_LIMIT = 4096; // deep plans: the default 100 is too low

  private Wire() {}

  /** A decoded payload; {@code operatorVersion} -1 when the client sent none. */
  public record Request(int version, String operator, Relation input, String specJson,
      int operatorVersion) {}

  /** The fix for any version mismatch between the client and the plugin. */
  static final String VERSION_FIX = "rebuild and reinstall the jar from the client's sources "
      + "(python server_ext/jvm/build.py; `python -m server_ext serve` rebuilds it when a Java "
      + "source changed) and restart the server, or install the same flink-tableapi-spark "
      + "version on the client and the server";

  /** The payload of an {@code Any} whose type URL is ours (its {@code value} bytes). */
  public static Request parsePayload(ByteString payload) {
    try {
      CodedInputStream in = payload.newCodedInput();
      in.setRecursionLimit(RECURSION_LIMIT);
      int version = -1;
      String operator = "";
      Relation input = null;
      String spec = "";
      int operatorVersion = -1;
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        switch (tag >>> 3) {
          case 1 -> version = in.readUInt32();
          case 2 -> operator = in.readString();
          case 3 -> {
            CodedInputStream child = in.readBytes().newCodedInput();
            child.setRecursionLimit(RECURSION_LIMIT);
            input = Relation.parseFrom(child);
          }
          case 4 -> spec = in.readString();
          case 5 -> operatorVersion = in.readUInt32();
          default -> in.skipField(tag);
        }
      }
      if (version != VERSION) {
        throw new IllegalArgumentException(
            "server_ext JVM plugin speaks wire version "
                + VERSION
                + " but the client sent "
                + version
                + ": " + VERSION_FIX);
      }
      return new Request(version, operator, input, spec, operatorVersion);
    } catch (IOException e) {
      throw new UncheckedIOException("malformed server_ext JVM operator payload", e);
    }
  }

  /**
   * The join spec of a {@code join} request, given the schemas the two sides' rows really
   * have (the struct types of {@code __l} and {@code __r}) and the session's time zone.
   */
  public static JoinSpec joinSpec(
      String specJson, StructType left, StructType right, String timeZone, boolean java8Time) {
    Specs.Envelope spec = Specs.Envelope.parse(specJson);
    return JoinSpec.of(spec.join(), spec.output(), left, right, timeZone, java8Time);
  }
}

package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.sparkproject.connect.protobuf.ByteString;
import org.sparkproject.connect.protobuf.CodedInputStream;

/**
 * The wire contract between the Python client and this plugin: the one place on the JVM side
 * (its Python twin is {@code server_ext/jvm/wire.py}; both change together, with
 * {@link #VERSION}).
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
 *   }
 * </pre>
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
  // 2: __kind and __seq may be left out; 3: position; 4: local_aggregate; 5: executors
  public static final int VERSION = 6;
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

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int RECURSION_LIMIT = 4096; // deep plans: the default 100 is too low

  private Wire() {}

  /** A decoded payload. */
  public record Request(int version, String operator, Relation input, String specJson) {}

  /** The payload of an {@code Any} whose type URL is ours (its {@code value} bytes). */
  public static Request parsePayload(ByteString payload) {
    try {
      CodedInputStream in = payload.newCodedInput();
      in.setRecursionLimit(RECURSION_LIMIT);
      int version = -1;
      String operator = "";
      Relation input = null;
      String spec = "";
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
          default -> in.skipField(tag);
        }
      }
      if (version != VERSION) {
        throw new IllegalArgumentException(
            "server_ext JVM plugin speaks wire version "
                + VERSION
                + " but the client sent "
                + version
                + ": install the same flink-tableapi-spark version on the client and the server"
                + " (or set table.exec.operator.tier=python)");
      }
      return new Request(version, operator, input, spec);
    } catch (IOException e) {
      throw new UncheckedIOException("malformed server_ext JVM operator payload", e);
    }
  }

  /** The key column names of a join request. */
  public static List<String> keyNames(String specJson) {
    List<String> keys = new ArrayList<>();
    read(specJson).get("keys").forEach(k -> keys.add(k.asText()));
    return keys;
  }

  /** The output schema a join request asks for ({@code __kind} first). */
  public static StructType output(String specJson) {
    return (StructType) DataType.fromJson(read(specJson).get("output").toString());
  }

  /**
   * The join spec, given the schemas the two sides' rows really have (the struct types of
   * {@code __l} and {@code __r}) and the session's time zone.
   */
  public static JoinSpec joinSpec(
      String specJson, StructType left, StructType right, String timeZone, boolean java8Time) {
    return twoInputSpec(read(specJson), "join", left, right, timeZone, java8Time);
  }

  /**
   * The spec of a two-input operator from the section {@code section} of its spec JSON
   * ({@code join}, {@code temporal} or {@code interval}: sides, kind, null_safe, residual).
   */
  static JoinSpec twoInputSpec(JsonNode root, String section, StructType left, StructType right,
      String timeZone, boolean java8Time) {
    JsonNode join = root.get(section);
    if (join == null) {
      throw new IllegalArgumentException("the spec has no " + section + " section: " + root);
    }
    String kind = join.get("kind").asText();
    JsonNode nullSafe = join.has("null_safe") ? join.get("null_safe") : JSON.createArrayNode();
    boolean[] safe = new boolean[nullSafe.size()];
    for (int i = 0; i < safe.length; i++) safe[i] = nullSafe.get(i).asBoolean();
    JsonNode residual = join.get("residual");
    return new JoinSpec(
        kind,
        side(join.get("left"), left, "left"),
        side(join.get("right"), right, "right"),
        safe,
        residual == null || residual.isNull() ? null : residual.toString(),
        (StructType) DataType.fromJson(root.get("output").toString()),
        timeZone,
        java8Time);
  }

  private static JoinSpec.Side side(JsonNode side, StructType schema, String name) {
    int declared = side.get("fields").size();
    if (declared != schema.fields().length) {
      throw new IllegalArgumentException(
          "the "
              + name
              + " input has "
              + schema.fields().length
              + " fields but the join spec declares "
              + declared
              + ": the client and the plan disagree (a bug in the client's compiler)");
    }
    JsonNode uk = side.get("unique_key");
    int[] unique = new int[uk.size()];
    for (int i = 0; i < unique.length; i++) unique[i] = uk.get(i).asInt();
    JsonNode ttl = side.get("ttl_ms");
    return new JoinSpec.Side(
        schema,
        JoinSpec.Layout.fromWire(side.get("input_spec").asText()),
        unique,
        ttl == null || ttl.isNull() ? -1 : ttl.asLong());
  }

  static JsonNode read(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new IllegalArgumentException("malformed server_ext JVM join spec: " + e, e);
    }
  }
}

package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The spec JSON of a request, parsed into typed records: an operator reads its record, never a
 * JSON field by name. The envelope and the records operators share are here ({@link
 * Envelope#join()}, {@link Envelope#aggregate()}); an operator's own record lives in its class
 * (e.g. {@code IntervalJoin.Spec}), parsed from {@link Envelope#section} with the readers here. The field names are the Python spec classes' ({@code wire_section()} of {@code
 * server_ext/joins/*_spec.py} and {@code server_ext/aggregate_spec.py}); a field that is
 * missing or of the wrong JSON type fails here, at plan time, naming the section and field.
 */
final class Specs {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Specs() {}

  /** A JSON document (the spec, a condition tree). */
  static JsonNode read(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new IllegalArgumentException("malformed server_ext JVM operator spec: " + e, e);
    }
  }

  /**
   * A grouped operator's spec: the grouping key columns, the output schema ({@code __kind}
   * first) and the operator's own section (named by the operator), parsed on demand.
   */
  record Envelope(List<String> keys, StructType output, JsonNode root) {
    static Envelope parse(String json) {
      JsonNode root = read(json);
      if (!root.isObject()) {
        throw new IllegalArgumentException("the operator spec must be a JSON object: " + json);
      }
      List<String> keys = strings(field(root, "keys", "spec"), "spec.keys");
      JsonNode output = field(root, "output", "spec");
      return new Envelope(keys, (StructType) DataType.fromJson(output.toString()), root);
    }

    /** The {@code join} section (a regular join). */
    TwoInput join() {
      return TwoInput.parse(section("join"), "join", true);
    }

    /** The {@code aggregate} section (also the {@code local_aggregate} relation's). */
    Aggregate aggregate() {
      return Aggregate.parse(section("aggregate"));
    }

    /**
     * The operator's own section, by its wire name: an operator's record parses it (in its
     * own class, with the readers below).
     */
    JsonNode section(String name) {
      JsonNode section = root.get(name);
      if (section == null || !section.isObject()) {
        throw new IllegalArgumentException("the spec has no " + name + " section: " + root);
      }
      return section;
    }
  }

  /** An input field: its name and DDL type, as the client declares it. */
  record Field(String name, String type) implements Serializable {
    static List<Field> list(JsonNode fields, String where) {
      List<Field> out = new ArrayList<>();
      for (JsonNode f : array(fields, where)) {
        if (!f.isArray() || f.size() != 2) {
          throw new IllegalArgumentException(where + " must hold [name, type] pairs: " + fields);
        }
        out.add(new Field(f.get(0).asText(), f.get(1).asText()));
      }
      return List.copyOf(out);
    }
  }

  /** One side of a two-input join ({@code SideSpec.wire_json()}); {@code ttlMs} -1: none. */
  record Side(List<Field> fields, String inputSpec, int[] uniqueKey, long ttlMs) {
    static Side parse(JsonNode s, String where) {
      JsonNode uk = array(field(s, "unique_key", where), where + ".unique_key");
      int[] unique = new int[uk.size()];
      for (int i = 0; i < unique.length; i++) unique[i] = uk.get(i).asInt();
      return new Side(Field.list(field(s, "fields", where), where + ".fields"),
          text(s, "input_spec", where), unique, optionalLong(s, "ttl_ms", -1));
    }
  }

  /**
   * What the two-input joins share ({@code JoinSpec}, {@code TemporalSpec}, {@code
   * IntervalSpec}): kind, sides, per equi key null-safety (none: all false), the residual
   * condition tree as JSON (null: none), the output names.
   */
  record TwoInput(String kind, Side left, Side right, boolean[] nullSafe, String residualJson,
      List<String> outputNames) {
    static TwoInput parse(JsonNode s, String section, boolean hasNullSafe) {
      boolean[] safe = new boolean[0];
      JsonNode ns = s.get("null_safe");
      if (hasNullSafe && ns != null && !ns.isNull()) {
        array(ns, section + ".null_safe");
        safe = new boolean[ns.size()];
        for (int i = 0; i < safe.length; i++) safe[i] = ns.get(i).asBoolean();
      }
      JsonNode residual = s.get("residual");
      JsonNode names = s.get("output_names");
      return new TwoInput(text(s, "kind", section),
          Side.parse(field(s, "left", section), section + ".left"),
          Side.parse(field(s, "right", section), section + ".right"), safe,
          residual == null || residual.isNull() ? null : residual.toString(),
          names == null || names.isNull() ? List.of() : strings(names, section + ".output_names"));
    }
  }

  /** One aggregate call: function name, argument field (-1: none, COUNT(*)), DISTINCT. */
  record AggCall(String function, int arg, boolean distinct) implements Serializable {
    /** A section's {@code aggs} list (the group and window aggregates'). */
    static List<AggCall> list(JsonNode s, String section) {
      List<AggCall> aggs = new ArrayList<>();
      for (JsonNode a : array(field(s, "aggs", section), section + ".aggs")) {
        JsonNode arg = a.get("arg");
        aggs.add(new AggCall(text(a, "function", section + ".aggs"),
            arg == null || arg.isNull() ? -1 : arg.asInt(), a.path("distinct").asBoolean(false)));
      }
      return List.copyOf(aggs);
    }
  }

  /**
   * The group aggregate ({@code AggregateSpec}): the input row's fields, the number of group
   * keys, the calls, and the physical choices (update-before, mini-batch and its bundle size,
   * {@link Integer#MAX_VALUE} when unbounded; two-phase; a retracting input; state TTL, -1:
   * none).
   */
  record Aggregate(List<Field> input, int keyCount, List<AggCall> aggs, boolean updateBefore,
      boolean miniBatch, int bundleSize, boolean twoPhase, boolean retractions, long ttlMs) {
    Aggregate {
      if (bundleSize <= 0) {
        throw new IllegalArgumentException("bundle_size must be positive, got " + bundleSize);
      }
    }

    static Aggregate parse(JsonNode s) {
      List<AggCall> aggs = AggCall.list(s, "aggregate");
      long size = optionalLong(s, "bundle_size", Integer.MAX_VALUE);
      return new Aggregate(Field.list(field(s, "input", "aggregate"), "aggregate.input"),
          (int) integer(s, "key_count", "aggregate"), aggs,
          s.path("update_before").asBoolean(true), s.path("mini_batch").asBoolean(false),
          (int) Math.min(size, Integer.MAX_VALUE), s.path("two_phase").asBoolean(false),
          s.path("retractions").asBoolean(true), optionalLong(s, "ttl_ms", -1));
    }
  }

  /**
   * The {@code file_time} relation's spec: the input's path column, the new column's name and
   * the table's name (for messages).
   */
  record FileTime(String path, String name, String table) {
    static FileTime parse(String json) {
      JsonNode s = read(json);
      return new FileTime(s.path("path").asText(), s.path("name").asText(),
          s.path("table").asText());
    }
  }

  // -- reading fields, with messages that name them (for every operator's record) -------------

  static JsonNode field(JsonNode node, String name, String where) {
    JsonNode v = node.get(name);
    if (v == null || v.isNull()) {
      throw new IllegalArgumentException("the " + where + " spec has no " + name + ": " + node);
    }
    return v;
  }

  static JsonNode array(JsonNode node, String where) {
    if (!node.isArray()) {
      throw new IllegalArgumentException(where + " must be a JSON list, got " + node);
    }
    return node;
  }

  static String text(JsonNode node, String name, String where) {
    JsonNode v = field(node, name, where);
    if (!v.isTextual()) {
      throw new IllegalArgumentException(where + "." + name + " must be a string, got " + v);
    }
    return v.asText();
  }

  static long integer(JsonNode node, String name, String where) {
    JsonNode v = field(node, name, where);
    if (!v.canConvertToLong()) {
      throw new IllegalArgumentException(where + "." + name + " must be an integer, got " + v);
    }
    return v.asLong();
  }

  static long optionalLong(JsonNode node, String name, long absent) {
    JsonNode v = node.get(name);
    return v == null || v.isNull() ? absent : v.asLong();
  }

  static List<String> strings(JsonNode node, String where) {
    return map(array(node, where), JsonNode::asText);
  }

  private static <T> List<T> map(JsonNode list, Function<JsonNode, T> f) {
    List<T> out = new ArrayList<>();
    list.forEach(n -> out.add(f.apply(n)));
    return List.copyOf(out);
  }
}

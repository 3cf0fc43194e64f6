package tableapi.serverext;

import java.io.Serializable;
import java.util.Set;
import org.apache.spark.sql.types.StructType;

/**
 * Everything a join operator needs, decided at plan time (the client's {@code JoinSpec}).
 * Serializable: it travels to the executors inside the operator function.
 */
public final class JoinSpec implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Set<String> KINDS = Set.of("inner", "left", "right", "full", "semi", "anti");

  /** How one side's rows are kept in state (Flink's JoinInputSideSpec). */
  public enum Layout {
    JOIN_KEY_CONTAINS_UNIQUE_KEY, // at most one row per join key
    HAS_UNIQUE_KEY, // unique key -> row
    NO_UNIQUE_KEY; // row -> count

    static Layout fromWire(String name) {
      return switch (name) {
        case "JoinKeyContainsUniqueKey" -> JOIN_KEY_CONTAINS_UNIQUE_KEY;
        case "HasUniqueKey" -> HAS_UNIQUE_KEY;
        case "NoUniqueKey" -> NO_UNIQUE_KEY;
        default -> throw new IllegalArgumentException("unknown input_spec " + name);
      };
    }
  }

  /** One input: the schema of its rows, state layout, unique key and state TTL (-1: none). */
  public record Side(StructType schema, Layout layout, int[] uniqueKey, long ttlMs)
      implements Serializable {
    public Side {
      if (layout != Layout.NO_UNIQUE_KEY && uniqueKey.length == 0) {
        throw new IllegalArgumentException(layout + " needs the unique key's field indexes");
      }
      for (int i : uniqueKey) {
        if (i < 0 || i >= schema.fields().length) {
          throw new IllegalArgumentException("unique key index " + i + " out of range");
        }
      }
    }

    public boolean hasTtl() {
      return ttlMs >= 0;
    }

    public int width() {
      return schema.fields().length;
    }
  }

  public final String kind;
  public final Side left;
  public final Side right;
  public final boolean[] nullSafe; // per equi key: nulls are equal (IS NOT DISTINCT FROM)
  public final String residualJson; // the residual condition tree (JSON), or null
  public final StructType output; // __kind, then the output fields
  public final String timeZone; // the session's, for TIMESTAMP values in the condition
  public final boolean java8Time; // dates and timestamps are java.time values

  public JoinSpec(
      String kind,
      Side left,
      Side right,
      boolean[] nullSafe,
      String residualJson,
      StructType output,
      String timeZone,
      boolean java8Time) {
    if (!KINDS.contains(kind)) {
      throw new IllegalArgumentException("join kind must be one of " + KINDS + ", got " + kind);
    }
    this.kind = kind;
    this.left = left;
    this.right = right;
    this.nullSafe = nullSafe;
    this.residualJson = residualJson;
    this.output = output;
    this.timeZone = timeZone;
    this.java8Time = java8Time;
    int width = 1 + left.width() + (projectsRight() ? right.width() : 0);
    if (output.fields().length != width) {
      throw new IllegalArgumentException(
          "the output schema has "
              + output.fields().length
              + " columns but a "
              + kind
              + " join of these inputs gives "
              + width
              + " (__kind and the fields)");
    }
  }

  /**
   * The spec of a two-input join from its wire record, given the schemas the two sides' rows
   * really have (the struct types of {@code __l} and {@code __r}), the output schema and the
   * session's time settings.
   */
  static JoinSpec of(Specs.TwoInput join, StructType output, StructType left, StructType right,
      String timeZone, boolean java8Time) {
    return new JoinSpec(join.kind(), side(join.left(), left, "left"),
        side(join.right(), right, "right"), join.nullSafe(), join.residualJson(), output,
        timeZone, java8Time);
  }

  private static Side side(Specs.Side side, StructType schema, String name) {
    int declared = side.fields().size();
    if (declared != schema.fields().length) {
      throw new IllegalArgumentException("the " + name + " input has " + schema.fields().length
          + " fields but the join spec declares " + declared
          + ": the client and the plan disagree (a bug in the client's compiler)");
    }
    return new Side(schema, Layout.fromWire(side.inputSpec()), side.uniqueKey(), side.ttlMs());
  }

  public boolean semiOrAnti() {
    return kind.equals("semi") || kind.equals("anti");
  }

  public boolean projectsRight() {
    return !semiOrAnti();
  }

  /** The left side keeps association counts (outer side, or the left of semi/anti). */
  public boolean leftOuter() {
    return kind.equals("left") || kind.equals("full") || semiOrAnti();
  }

  public boolean rightOuter() {
    return kind.equals("right") || kind.equals("full");
  }

  public boolean hasTtl() {
    return left.hasTtl() || right.hasTtl();
  }
}

package tableapi.serverext;

import java.util.List;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A grouped operator of the plugin: its {@code flatMapGroupsWithState} function, its output
 * schema ({@code __kind} first) and the timeout conf it runs with. Each operator class has a
 * {@link Factory} ({@code static Operator create(Operator.Request)}) and one line in {@link
 * OperatorPlugin#OPERATORS}; the client's twin is the spec class with that operator name
 * ({@code server_ext/operators.py}).
 */
record Operator(
    FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> fn,
    StructType output,
    GroupStateTimeout timeout) {

  /** The operator for a request; bad specs fail here, at plan time, naming the problem. */
  @FunctionalInterface
  interface Factory {
    Operator create(Request request);
  }

  /** A timeout when {@code ttl} (processing-time state expiry), else none. */
  static GroupStateTimeout processingTimeoutIf(boolean ttl) {
    return ttl ? GroupStateTimeout.ProcessingTimeTimeout() : GroupStateTimeout.NoTimeout();
  }

  /**
   * What a factory reads: the parsed spec ({@link Specs.Envelope}: keys, output and the
   * operator's own typed section), the schema of the input union and the session's time
   * settings.
   */
  record Request(Specs.Envelope spec, StructType input, String timeZone, boolean java8Time) {

    /** The output schema the client asks for ({@code __kind} first). */
    StructType output() {
      return spec.output();
    }

    /** A struct column of the union (an input's rows), checked. */
    StructType struct(String name) {
      if (!List.of(input.fieldNames()).contains(name)) {
        throw new IllegalArgumentException(
            "the server_ext JVM operator needs the tagged union's struct column " + name
                + "; its input has " + List.of(input.fieldNames()));
      }
      if (!(input.apply(name).dataType() instanceof StructType s)) {
        throw new IllegalArgumentException(name + " must be a struct column");
      }
      return s;
    }

    /**
     * A two-input spec over the union's {@code __l} / {@code __r} (and {@code __t} when
     * {@code timed}) from the {@code section} section's record {@code join}, checked: row
     * types the state can keep, output types equal to the input fields they copy, a residual
     * that compiles.
     */
    JoinSpec twoInput(Specs.TwoInput join, String section, boolean timed) {
      StructType left = struct(Wire.LEFT_ROW);
      StructType right = struct(Wire.RIGHT_ROW);
      if (timed && !List.of(input.fieldNames()).contains(Wire.TIME)) {
        throw new IllegalArgumentException("the " + section + " join needs the union's "
            + Wire.TIME + " column; its input has " + List.of(input.fieldNames()));
      }
      JoinSpec spec = JoinSpec.of(join, spec().output(), left, right, timeZone, java8Time);
      RowCodec.check(left);
      RowCodec.check(right);
      checkOutput(spec);
      Condition.compile(spec.residualJson, spec.timeZone); // a bad tree fails here, not in a task
      return spec;
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
}

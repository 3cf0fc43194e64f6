package tableapi.serverext;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF0;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The {@code position} relation: its input plus a BIGINT column that numbers the rows in the
 * order their task reads them. Put right above a file scan, it orders the rows of one file
 * split as they stand in the file (a task reads a split from its start to its end), which
 * Spark itself keeps nowhere: a sort that spills merges equal keys in any order. The client
 * adds the file's time, name and split start in front of it ({@code __seq}).
 *
 * <p>One counter per JVM, so numbers only grow: within a task they follow its reading order
 * whatever else runs beside it. (Spark refuses {@code monotonically_increasing_id()} in
 * streaming queries; a nondeterministic UDF is neither folded nor moved.)
 */
final class Positions {
  private static final AtomicLong NEXT = new AtomicLong();

  private Positions() {}

  /** A position for each row, in the calling task's order. */
  static final class Next implements UDF0<Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public Long call() {
      return NEXT.getAndIncrement();
    }
  }

  /** {@code input} plus the column {@code name}: each row's position. */
  static Dataset<Row> withPosition(Dataset<Row> input, String name) {
    if (name.isEmpty() || java.util.List.of(input.columns()).contains(name)) {
      throw new IllegalArgumentException(
          "the position column needs a new name, got '" + name + "' for " + input.schema());
    }
    UserDefinedFunction next = functions.udf(new Next(), DataTypes.LongType).asNondeterministic();
    return input.withColumn(name, next.apply());
  }
}

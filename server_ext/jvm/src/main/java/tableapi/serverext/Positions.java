package tableapi.serverext;

import org.apache.spark.TaskContext;
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
 * <p>One counter per task attempt, from 0: a task that runs again (its executor lost, on
 * another host) numbers the same rows the same way, so its shuffle output is the same and
 * Spark need not fail the micro-batch as indeterminate (its shuffle checksums compare a
 * retried map task's output with the lost one's). A task runs on one thread, hence a
 * thread-local counter. (Spark refuses {@code monotonically_increasing_id()} in streaming
 * queries; a nondeterministic UDF is neither folded nor moved.)
 */
final class Positions {
  /** The task attempt a thread numbers rows for, and its next position. */
  private static final class Counter {
    long task = Long.MIN_VALUE;
    long next;
  }

  private static final ThreadLocal<Counter> COUNTER = ThreadLocal.withInitial(Counter::new);

  private Positions() {}

  /** A position for each row, in the calling task's order. */
  static final class Next implements UDF0<Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public Long call() {
      TaskContext task = TaskContext.get();
      long id = task == null ? -1 : task.taskAttemptId();
      Counter counter = COUNTER.get();
      if (counter.task != id) {
        counter.task = id;
        counter.next = 0;
      }
      return counter.next++;
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

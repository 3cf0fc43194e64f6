package tableapi.serverext;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.Trigger;
import org.apache.spark.sql.streaming.ValueState;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The measurement behind the timer service's design (README.md, "Timers"): one workload, many
 * event-time timers per key, run by (a) {@code flatMapGroupsWithState} with {@link
 * TimerService} (timers in the key's binary value) on the HDFS-backed store and on RocksDB,
 * and (b) {@code transformWithState} with its own timers and a {@code ValueState} (RocksDB
 * only: Spark refuses it on the HDFS-backed store). local[1], one shuffle partition: one
 * thread. Each input row counts into its key's state and sets an event-time timer 2 s after
 * its time, rounded to 100 ms; a fired timer emits a row.
 *
 * <pre>
 *   java -cp jar:test-classes:pyspark/jars/* tableapi.serverext.TimerBench [keys] [batches]
 *        [rows per batch]
 * </pre>
 */
public final class TimerBench {
  private static final String HDFS =
      "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider";
  private static final String ROCKSDB =
      "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider";

  private TimerBench() {}

  static long timerAt(long ms) {
    return (ms / 100 + 20) * 100;
  }

  /** (a): the timers in the key's state value beside flatMapGroupsWithState. */
  static final class WithService implements FlatMapGroupsWithStateFunction<Long, Row, byte[], Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public java.util.Iterator<Long> call(Long key, java.util.Iterator<Row> rows,
        GroupState<byte[]> state) {
      TimerService timers = TimerService.load(state);
      long watermark = state.getCurrentWatermarkMs();
      List<Long> out = new ArrayList<>();
      for (TimerService.Timer t = timers.pollDue(watermark, Long.MIN_VALUE); t != null;
          t = timers.pollDue(watermark, Long.MIN_VALUE)) {
        out.add(t.time());
      }
      long count = 0;
      if (timers.value() != null) count = new RowCodec.In(timers.value()).zigzag();
      while (rows.hasNext()) {
        Row r = rows.next();
        count++;
        timers.register(TimerService.Domain.EVENT_TIME, timerAt(r.getTimestamp(1).getTime()), 0);
      }
      RowCodec.Out value = new RowCodec.Out(10);
      value.zigzag(count);
      timers.value(value.bytes());
      timers.save(state, TimerService.Domain.EVENT_TIME);
      return out.iterator();
    }
  }

  /** (b): transformWithState's timers and a ValueState. */
  static final class WithTws extends StatefulProcessor<Long, Row, Long> {
    private static final long serialVersionUID = 1L;
    private transient ValueState<Long> count;

    @Override
    public void init(OutputMode outputMode, TimeMode timeMode) {
      count = getHandle().getValueState("count", Encoders.LONG(), TTLConfig.NONE());
    }

    @Override
    public scala.collection.Iterator<Long> handleInputRows(Long key,
        scala.collection.Iterator<Row> rows, TimerValues timerValues) {
      long c = count.exists() ? count.get() : 0;
      while (rows.hasNext()) {
        Row r = rows.next();
        c++;
        getHandle().registerTimer(timerAt(r.getTimestamp(1).getTime()));
      }
      count.update(c);
      return scala.collection.Iterator$.MODULE$.empty();
    }

    @Override
    public scala.collection.Iterator<Long> handleExpiredTimer(Long key, TimerValues timerValues,
        ExpiredTimerInfo info) {
      return CollectionConverters.asScala(List.of(info.getExpiryTimeInMs()).iterator());
    }
  }

  public static void main(String[] args) throws Exception {
    int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int batches = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int rows = args.length > 2 ? Integer.parseInt(args[2]) : 20000;
    SparkSession spark = SparkSession.builder().master("local[1]").appName("timer-bench")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "true")
        .getOrCreate();
    spark.sparkContext().setLogLevel("ERROR");
    Path tmp = Files.createTempDirectory("timer-bench-");
    try {
      Path input = write(spark, tmp.resolve("in"), keys, batches, rows);
      Path warm = write(spark, tmp.resolve("warm"), keys / 10, 3, rows / 10);
      String[][] variants = {
          {"flatMapGroupsWithState + TimerService, HDFS-backed", "fmgws", HDFS},
          {"flatMapGroupsWithState + TimerService, RocksDB", "fmgws", ROCKSDB},
          {"transformWithState timers, RocksDB", "tws", ROCKSDB}};
      for (String[] v : variants) run(spark, warm, tmp, v[1], v[2]); // JIT warm-up
      System.out.printf("keys %d, batches %d, rows per batch %d%n", keys, batches, rows);
      for (String[] v : variants) {
        long[] r = run(spark, input, tmp, v[1], v[2]);
        System.out.printf("%-52s %6d ms  %8d fired%n", v[0], r[0], r[1]);
      }
    } finally {
      spark.stop();
      try (var paths = Files.walk(tmp)) {
        paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      }
    }
  }

  /** Batch files, one per micro-batch: batch b's times in [b s, b s + 1 s). */
  private static Path write(SparkSession spark, Path dir, int keys, int batches, int rows)
      throws Exception {
    Files.createDirectories(dir);
    long step = Math.max(1, 1000L * keys / rows);
    for (int b = 0; b < batches; b++) {
      Path part = dir.resolveSibling(dir.getFileName() + "-part" + b);
      spark.range(rows).selectExpr("id % " + keys + " AS key",
          "timestamp_millis(" + (b * 1000L) + " + (id div " + keys + ") * " + step + ") AS ts")
          .coalesce(1).write().parquet(part.toString());
      try (var files = Files.list(part)) {
        Path file = files.filter(p -> p.toString().endsWith(".parquet")).findFirst().get();
        Files.move(file, dir.resolve(String.format("b%04d.parquet", b)));
      }
      Thread.sleep(5); // file order is modification order
    }
    return dir;
  }

  /** The query over all of {@code input}: its wall time in ms and the rows it emitted. */
  private static long[] run(SparkSession spark, Path input, Path tmp, String variant,
      String provider) throws Exception {
    spark.conf().set("spark.sql.streaming.stateStore.providerClass", provider);
    Dataset<Row> in = spark.readStream().schema("key BIGINT, ts TIMESTAMP")
        .option("maxFilesPerTrigger", 1).parquet(input.toString())
        .withWatermark("ts", "0 seconds");
    var grouped = in.groupByKey((MapFunction<Row, Long>) r -> r.getLong(0), Encoders.LONG());
    Dataset<Long> out = variant.equals("tws")
        ? grouped.transformWithState(new WithTws(), TimeMode.EventTime(), OutputMode.Append(),
            Encoders.LONG())
        : grouped.flatMapGroupsWithState(new WithService(), OutputMode.Append(),
            Encoders.BINARY(), Encoders.LONG(), GroupStateTimeout.EventTimeTimeout());
    String name = "bench_" + variant + "_" + System.nanoTime();
    Path checkpoint = Files.createTempDirectory(tmp, "cp-");
    long start = System.nanoTime();
    StreamingQuery q = out.writeStream().format("memory").queryName(name)
        .option("checkpointLocation", checkpoint.toString()).outputMode("append")
        .trigger(Trigger.AvailableNow()).start();
    q.awaitTermination();
    long ms = (System.nanoTime() - start) / 1_000_000;
    long fired = spark.table(name).count();
    return new long[] {ms, fired};
  }
}

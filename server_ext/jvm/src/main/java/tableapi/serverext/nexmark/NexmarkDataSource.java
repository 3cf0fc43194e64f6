/*
 * The Spark DataSource V2 'nexmark': Nexmark's events (this package's port of Nexmark's
 * generator, Apache 2.0) generated on the executors, one kind of event per table.
 */
package tableapi.serverext.nexmark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;
import tableapi.serverext.nexmark.model.Auction;
import tableapi.serverext.nexmark.model.Bid;
import tableapi.serverext.nexmark.model.Person;

/**
 * {@code spark.read.format("tableapi.serverext.nexmark.NexmarkDataSource").option("kind", "bid")
 * .option("events.num", "1000").load()}: the bids among the first 1000 Nexmark events, with the
 * columns of Nexmark's view {@code bid} (timestamps as Spark TIMESTAMPs of the events' UTC
 * times). Options: 'kind' (person, auction or bid) and Nexmark's (see {@link GeneratorConfig}).
 *
 * <p>Batch: the event range [0, events.num) cut into partitions, each generated where it is read
 * (nothing but the options travels). Streaming: a micro-batch stream whose offsets are event
 * indices; a bounded table (events.num &gt; 0) has all its events available at once (or, with
 * 'rate.limited' or 'max-emit-speed' = false, as the wall clock passes their times) and supports
 * Trigger.AvailableNow; an unbounded one (events.num = 0) produces first-event.rate events per
 * second of wall clock. The same options give the same rows, however the range is split.
 */
public final class NexmarkDataSource implements TableProvider, DataSourceRegister {
  /** Events per partition below which a range is not cut further. */
  static final long MIN_EVENTS_PER_PARTITION = 50_000L;

  private static final StructType[] SCHEMAS = {
    schema(
        "id:l name:s emailAddress:s creditCard:s city:s state:s dateTime:t extra:s"),
    schema(
        "id:l itemName:s description:s initialBid:l reserve:l dateTime:t expires:t seller:l"
            + " category:l extra:s"),
    schema("auction:l bidder:l price:l channel:s url:s dateTime:t extra:s"),
  };

  private static StructType schema(String spec) {
    List<StructField> fields = new ArrayList<>();
    for (String column : spec.split(" ")) {
      String[] nt = column.split(":");
      DataType type =
          switch (nt[1]) {
            case "l" -> DataTypes.LongType;
            case "t" -> DataTypes.TimestampType;
            default -> DataTypes.StringType;
          };
      fields.add(DataTypes.createStructField(nt[0], type, false));
    }
    return DataTypes.createStructType(fields);
  }

  /** The kind a table's options name: its index in {@link NexmarkGenerator#KINDS}. */
  static int kind(Map<String, String> options) {
    String kind = options.get("kind");
    for (int k = 0; k < NexmarkGenerator.KINDS.length; k++) {
      if (NexmarkGenerator.KINDS[k].equals(kind == null ? null : kind.toLowerCase(Locale.ROOT))) {
        return k;
      }
    }
    throw new IllegalArgumentException(
        "the nexmark source needs the option 'kind': 'person', 'auction' or 'bid' (got "
            + (kind == null ? "none" : "'" + kind + "'")
            + ")");
  }

  /** The generator's options among a reader's (Spark may add its own, e.g. 'path'). */
  static GeneratorConfig config(Map<String, String> options) {
    Map<String, String> own = new HashMap<>();
    for (Map.Entry<String, String> e : options.entrySet()) {
      String key = e.getKey().toLowerCase(Locale.ROOT);
      if (GeneratorConfig.OPTIONS.contains(key)) {
        own.put(key, e.getValue());
      }
    }
    return GeneratorConfig.of(own);
  }

  @Override
  public String shortName() {
    return "nexmark";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return SCHEMAS[kind(options)];
  }

  @Override
  public Table getTable(
      StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new NexmarkTable(kind(properties));
  }

  /** A table of one kind of event. */
  static final class NexmarkTable implements SupportsRead {
    private final int kind;

    NexmarkTable(int kind) {
      this.kind = kind;
    }

    @Override
    public String name() {
      return "nexmark " + NexmarkGenerator.KINDS[kind];
    }

    @Override
    public StructType schema() {
      return SCHEMAS[kind];
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return new NexmarkScan(kind, config(options), SCHEMAS[kind]);
    }
  }

  /** The scan (its columns pruned to those read), as a batch or a micro-batch stream. */
  static final class NexmarkScan
      implements ScanBuilder, SupportsPushDownRequiredColumns, Scan, Batch {
    private final int kind;
    private final GeneratorConfig config;
    private StructType columns;

    NexmarkScan(int kind, GeneratorConfig config, StructType columns) {
      this.kind = kind;
      this.config = config;
      this.columns = columns;
    }

    @Override
    public void pruneColumns(StructType required) {
      columns = required;
    }

    @Override
    public Scan build() {
      return this;
    }

    @Override
    public StructType readSchema() {
      return columns;
    }

    @Override
    public String description() {
      return "nexmark " + NexmarkGenerator.KINDS[kind] + ", events.num=" + config.numEvents;
    }

    @Override
    public Batch toBatch() {
      if (config.unbounded()) {
        throw new IllegalArgumentException(
            "a batch read of the nexmark source needs 'events.num' > 0 (0 is unbounded)");
      }
      return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
      return partitions(0, config.numEvents);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return new ReaderFactory(kind, config, columnIndices(kind, columns));
    }

    @Override
    public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
      return new Stream(this);
    }
  }

  /** The columns read, as indices into the kind's full row. */
  static int[] columnIndices(int kind, StructType columns) {
    StructType all = SCHEMAS[kind];
    int[] indices = new int[columns.fields().length];
    for (int i = 0; i < indices.length; i++) {
      indices[i] = all.fieldIndex(columns.fields()[i].name());
    }
    return indices;
  }

  /** [from, to) cut into at most the cluster's default parallelism partitions. */
  static InputPartition[] partitions(long from, long to) {
    long n = Math.max(0, to - from);
    int slots = Math.max(1, SparkContext.getOrCreate().defaultParallelism());
    long pieces = (n + MIN_EVENTS_PER_PARTITION - 1) / MIN_EVENTS_PER_PARTITION;
    int parts = (int) Math.max(1, Math.min(slots, pieces));
    InputPartition[] result = new InputPartition[parts];
    for (int p = 0; p < parts; p++) {
      result[p] = new Range(from + n * p / parts, from + n * (p + 1) / parts);
    }
    return result;
  }

  /** A partition: the events of indices [from, to). */
  record Range(long from, long to) implements InputPartition {}

  /** What an executor needs to generate a range: the options and the columns read. */
  record ReaderFactory(int kind, GeneratorConfig config, int[] columns)
      implements PartitionReaderFactory, Serializable {
    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      Range range = (Range) partition;
      return new Reader(kind, config, columns, range.from(), range.to());
    }
  }

  /** Generates a range's events of one kind, as rows of the columns read. */
  static final class Reader implements PartitionReader<InternalRow> {
    private final int kind;
    private final GeneratorConfig config;
    private final int[] columns;
    private final Object[] full = new Object[10];
    private long next;
    private final long to;
    private InternalRow row;

    Reader(int kind, GeneratorConfig config, int[] columns, long from, long to) {
      this.kind = kind;
      this.config = config;
      this.columns = columns;
      this.next = from;
      this.to = to;
    }

    @Override
    public boolean next() {
      while (next < to) {
        long index = next++;
        if (NexmarkGenerator.kind(config, index) == kind) {
          fill(NexmarkGenerator.event(config, index));
          Object[] values = new Object[columns.length];
          for (int i = 0; i < columns.length; i++) {
            Object v = full[columns[i]];
            values[i] = v instanceof String s ? UTF8String.fromString(s) : v;
          }
          row = new GenericInternalRow(values);
          return true;
        }
      }
      return false;
    }

    /** The event's fields in its view's order; times in microseconds (Spark's TIMESTAMP). */
    private void fill(Object event) {
      if (event instanceof Bid b) {
        set(
            b.auction(),
            b.bidder(),
            b.price(),
            b.channel(),
            b.url(),
            b.dateTime() * 1000L,
            b.extra());
      } else if (event instanceof Auction a) {
        set(
            a.id(),
            a.itemName(),
            a.description(),
            a.initialBid(),
            a.reserve(),
            a.dateTime() * 1000L,
            a.expires() * 1000L,
            a.seller(),
            a.category(),
            a.extra());
      } else {
        Person p = (Person) event;
        set(
            p.id(),
            p.name(),
            p.emailAddress(),
            p.creditCard(),
            p.city(),
            p.state(),
            p.dateTime() * 1000L,
            p.extra());
      }
    }

    private void set(Object... values) {
      System.arraycopy(values, 0, full, 0, values.length);
    }

    @Override
    public InternalRow get() {
      return row;
    }

    @Override
    public void close() {}
  }

  /** An event index as a streaming offset. */
  static final class Index extends Offset {
    final long value;

    Index(long value) {
      this.value = value;
    }

    @Override
    public String json() {
      return Long.toString(value);
    }
  }

  /**
   * The micro-batch stream: offsets are event indices. Events are available at once (a bounded
   * table at max emit speed), else as the wall clock passes their event times from the stream's
   * start (rate-limited, and every unbounded table).
   */
  static final class Stream implements MicroBatchStream, SupportsTriggerAvailableNow {
    private final NexmarkScan scan;
    private final GeneratorConfig config;
    private long clockStart = -1; // wall-clock ms at which index 0 was due
    private boolean availableNow; // Trigger.AvailableNow: read what is available at the start
    private long availableNowEnd = -1; // its last offset, fixed at its first latestOffset

    Stream(NexmarkScan scan) {
      this.scan = scan;
      this.config = scan.config;
    }

    private boolean paced() {
      return config.rateLimited || config.unbounded();
    }

    /** The end (exclusive) of the events available now, having read up to {@code from}. */
    private long available(long from) {
      long end = config.unbounded() ? Long.MAX_VALUE : config.numEvents;
      if (!paced()) {
        return end;
      }
      long now = System.currentTimeMillis();
      if (clockStart < 0) { // (re)started: the events read so far count as due
        clockStart = now - (long) (from * config.interEventDelayUs / 1000.0);
      }
      long due = (long) ((now - clockStart) * 1000.0 / config.interEventDelayUs);
      return Math.min(end, Math.max(from, due));
    }

    @Override
    public Offset initialOffset() {
      return new Index(0);
    }

    @Override
    public Offset deserializeOffset(String json) {
      return new Index(Long.parseLong(json.trim()));
    }

    @Override
    public Offset latestOffset() {
      throw new UnsupportedOperationException("latestOffset(Offset, ReadLimit) is used");
    }

    @Override
    public Offset latestOffset(Offset start, ReadLimit limit) {
      long from = ((Index) start).value;
      long end = available(from);
      if (availableNow) {
        if (availableNowEnd < 0) {
          availableNowEnd = end;
        }
        end = Math.min(end, availableNowEnd);
      }
      if (limit instanceof ReadMaxRows max) {
        end = Math.min(end, from + max.maxRows());
      }
      return new Index(end);
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
      return ReadLimit.allAvailable();
    }

    @Override
    public void prepareForTriggerAvailableNow() {
      availableNow = true;
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start, Offset end) {
      return partitions(((Index) start).value, ((Index) end).value);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return scan.createReaderFactory();
    }

    @Override
    public void commit(Offset end) {}

    @Override
    public void stop() {}
  }
}

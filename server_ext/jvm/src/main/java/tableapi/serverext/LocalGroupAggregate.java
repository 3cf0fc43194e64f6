package tableapi.serverext;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters$;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The {@code local_aggregate} relation: the local phase of a two-phase aggregation (Flink's
 * MiniBatchLocalGroupAggFunction), before the shuffle. Each task folds its rows of the
 * micro-batch (in bundles of at most {@code bundle_size} rows) into one partial accumulator per
 * group key and emits those: the rows the shuffle moves are a key's partials, one per task and
 * bundle, not its changes. {@link GroupAggregate} in two-phase mode merges them.
 *
 * <p>In: the aggregate's tagged union ({@code __k0..}, {@code __side}, [{@code __kind}, {@code
 * __seq}], {@code __in0}). Out: {@code __k0..}, {@code __side} (0), {@code __in0} (NULL: the
 * global operator reads its input row type from it) and {@code __acc}, the partial in the
 * operator's state format. Partials merge in any order, so no {@code __seq} is needed.
 *
 * <p>It runs as a physical operator of its own ({@link Exec}, planned by {@link Strategy} from
 * the logical {@link Node}) over Spark's internal rows, as Spark's partial aggregation does: the
 * group key stays in its binary form (an {@code UnsafeRow}, the map's key) and only the fields
 * the accumulators read are converted to Java values. (A {@code mapPartitions} over {@code Row}s
 * converted every field of every row first: measured, most of this phase's time.)
 */
public final class LocalGroupAggregate implements Serializable {
  private static final long serialVersionUID = 1L;

  private final GroupAggregate agg;
  private final StructType out;
  private final DataType[] keyTypes;
  private final int kindAt; // -1: an insert-only union (every row +I)
  private final int inAt; // __in0 in the input
  private final int structAt; // __in0 in the output
  private final int[] read; // the fields of __in0 the accumulators read
  private final DataType[] readTypes;
  private final boolean singleKey; // one key column, its values compared as they are
  private static final Object NULL_KEY = new Object(); // a NULL single key (a map has no null)

  private LocalGroupAggregate(GroupAggregate agg, StructType input) {
    this.agg = agg;
    int keyCount = agg.keyCount();
    this.out = output(input, keyCount);
    this.keyTypes = new DataType[keyCount];
    for (int i = 0; i < keyCount; i++) keyTypes[i] = input.fields()[i].dataType();
    this.kindAt = List.of(input.fieldNames()).indexOf(Wire.KIND);
    this.inAt = input.fieldIndex(Wire.INPUT_PREFIX + 0);
    this.structAt = keyCount + 1;
    this.singleKey = keyCount == 1 && (keyTypes[0] instanceof StringType
        || keyTypes[0] instanceof LongType || keyTypes[0] instanceof IntegerType);
    this.read = agg.foldedFields();
    this.readTypes = new DataType[read.length];
    for (int j = 0; j < read.length; j++) readTypes[j] = agg.row().fields()[read[j]].dataType();
  }

  /** The local phase over an input of schema {@code input}, for the aggregate spec. */
  static LocalGroupAggregate of(String specJson, StructType input, String timeZone,
      boolean java8Time) {
    GroupAggregate agg = GroupAggregate.of(
        new Operator.Request(Wire.read(specJson), input, timeZone, java8Time), true);
    return new LocalGroupAggregate(agg, input);
  }

  /** The partial rows' schema: the keys, {@code __side}, {@code __in0}, {@code __acc}. */
  static StructType output(StructType input, int keyCount) {
    List<StructField> fields = new ArrayList<>(Arrays.asList(input.fields()).subList(0, keyCount));
    fields.add(DataTypes.createStructField(Wire.SIDE, DataTypes.ByteType, false));
    StructField row = input.apply(Wire.INPUT_PREFIX + 0);
    fields.add(DataTypes.createStructField(row.name(), row.dataType(), true)); // NULL here
    fields.add(DataTypes.createStructField(GroupAggregate.ACC, DataTypes.BinaryType, false));
    return new StructType(fields.toArray(StructField[]::new));
  }

  /**
   * The relation over {@code input} for the aggregate spec {@code specJson} (checked here, at
   * plan time), with the strategy that plans it registered in the session.
   */
  static Dataset<Row> apply(Dataset<Row> input, String specJson, SparkSession session) {
    SQLConf conf = session.sessionState().conf();
    LocalGroupAggregate fn = of(specJson, input.schema(), conf.sessionLocalTimeZone(),
        conf.datetimeJava8ApiEnabled());
    Strategy.register(session);
    LogicalPlan child = input.logicalPlan();
    @SuppressWarnings("unchecked") // an immutable Seq of AttributeReferences is one of Attributes
    Seq<Attribute> output = (Seq<Attribute>) (Seq<?>) DataTypeUtils.toAttributes(fn.out);
    return Dataset.ofRows(session, new Node(child, specJson, child.output(), output));
  }

  /**
   * The local phase over one task's rows (internal rows of the union's schema): the partial
   * rows, a bundle's after another's.
   */
  Iterator<InternalRow> process(Iterator<InternalRow> rows) {
    agg.init();
    UnsafeProjection keyOf = UnsafeProjection.create(keyTypes); // the first columns: the keys
    UnsafeProjection toUnsafe = UnsafeProjection.create(out);
    boolean java8Time = agg.java8Time();
    int width = agg.row().fields().length;
    int bundleSize = agg.bundleSize();
    Map<Object, GroupAggregate.Accs> partials = new LinkedHashMap<>();
    List<InternalRow> result = new ArrayList<>();
    Object[] values = new Object[width];
    int n = 0;
    while (rows.hasNext()) {
      InternalRow r = rows.next();
      // One key of a type with value equality: the value itself (a view into the row, copied
      // when kept); else the key columns as an UnsafeRow (reused by the projection).
      Object key = !singleKey ? keyOf.apply(r) : r.isNullAt(0) ? NULL_KEY : single(r);
      GroupAggregate.Accs accs = partials.get(key);
      if (accs == null) {
        accs = agg.new Accs();
        partials.put(kept(key), accs);
      }
      InternalRow struct = r.getStruct(inAt, width);
      for (int j = 0; j < read.length; j++) {
        int f = read[j];
        values[f] = struct.isNullAt(f) ? null : external(struct, f, readTypes[j], java8Time);
      }
      accs.fold(values, Rows.accumulates(kindAt < 0 ? Wire.INSERT : r.getByte(kindAt)));
      if (++n == bundleSize) { // the bundle is full: its partials go, a new one starts
        flush(partials, result, toUnsafe);
        n = 0;
      }
    }
    flush(partials, result, toUnsafe);
    return result.iterator();
  }

  /** The one key column's value (not null), read by its type's own getter. */
  private Object single(InternalRow r) {
    DataType t = keyTypes[0];
    if (t instanceof StringType) return r.getUTF8String(0);
    return t instanceof LongType ? (Object) r.getLong(0) : (Object) r.getInt(0);
  }

  /** A map key that outlives its input row. */
  private static Object kept(Object key) {
    if (key instanceof UnsafeRow row) return row.copy();
    if (key instanceof UTF8String string) return string.clone();
    return key; // boxed: already its own
  }

  private void flush(Map<Object, GroupAggregate.Accs> partials, List<InternalRow> result,
      UnsafeProjection toUnsafe) {
    for (Map.Entry<Object, GroupAggregate.Accs> e : partials.entrySet()) {
      GenericInternalRow row = new GenericInternalRow(structAt + 2);
      if (e.getKey() instanceof UnsafeRow key) {
        for (int i = 0; i < keyTypes.length; i++) {
          row.update(i, key.isNullAt(i) ? null : key.get(i, keyTypes[i]));
        }
      } else {
        row.update(0, e.getKey() == NULL_KEY ? null : e.getKey());
      }
      row.update(structAt - 1, (byte) 0);
      row.update(structAt, null);
      row.update(structAt + 1, agg.encode(e.getValue()));
      result.add(toUnsafe.apply(row).copy());
    }
    partials.clear();
  }

  /**
   * Field {@code i} (not null) of an internal row as the Java value a {@code Row} has for it
   * (what the accumulators compute with, and what a {@code Row} of the session would hold).
   */
  static Object external(InternalRow r, int i, DataType t, boolean java8Time) {
    if (t instanceof StringType) return r.getUTF8String(i).toString();
    if (t instanceof LongType) return r.getLong(i);
    if (t instanceof IntegerType) return r.getInt(i);
    if (t instanceof DoubleType) return r.getDouble(i);
    if (t instanceof DecimalType d) {
      return r.getDecimal(i, d.precision(), d.scale()).toJavaBigDecimal();
    }
    if (t instanceof ShortType) return r.getShort(i);
    if (t instanceof ByteType) return r.getByte(i);
    if (t instanceof FloatType) return r.getFloat(i);
    if (t instanceof BooleanType) return r.getBoolean(i);
    if (t instanceof BinaryType) return r.getBinary(i);
    if (t instanceof DateType) {
      int days = r.getInt(i);
      return java8Time ? DateTimeUtils.daysToLocalDate(days) : DateTimeUtils.toJavaDate(days);
    }
    if (t instanceof TimestampType) {
      long micros = r.getLong(i);
      return java8Time
          ? DateTimeUtils.microsToInstant(micros)
          : DateTimeUtils.toJavaTimestamp(micros);
    }
    if (t instanceof TimestampNTZType) return DateTimeUtils.microsToLocalDateTime(r.getLong(i));
    return CatalystTypeConverters$.MODULE$.convertToScala(r.get(i, t), t);
  }

  @Override
  public String toString() {
    return "keys=" + keyTypes.length + ", bundle_size=" + agg.bundleSize();
  }

  // -- the operator in Spark's planner ---------------------------------------------------------

  /** The columns a node makes ({@code output}): not missing from its input. */
  private static AttributeSet produced(Seq<Attribute> output) {
    @SuppressWarnings("unchecked")
    scala.collection.Iterable<Expression> columns =
        (scala.collection.Iterable<Expression>) (scala.collection.Iterable<?>) output;
    return AttributeSet.apply(columns);
  }

  /** The logical node: its child (the union), the spec, the child's columns, its output. */
  public static final class Node extends LogicalPlan {
    private static final long serialVersionUID = 1L;
    private final LogicalPlan child;
    private final String specJson;
    private final Seq<Attribute> input; // what it reads: all of the union (for column pruning)
    private final Seq<Attribute> output;

    public Node(LogicalPlan child, String specJson, Seq<Attribute> input, Seq<Attribute> output) {
      this.child = child;
      this.specJson = specJson;
      this.input = input;
      this.output = output;
    }

    @Override
    public Seq<Attribute> output() {
      return output;
    }

    @Override
    public Seq<LogicalPlan> children() {
      return CollectionConverters.asScala(List.of(child)).toList();
    }

    @Override
    public AttributeSet producedAttributes() {
      return produced(output);
    }

    @Override
    public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> children) {
      return new Node(children.apply(0), specJson, input, output);
    }

    @Override
    public String nodeName() {
      return "LocalGroupAggregate";
    }

    @Override
    public int productArity() {
      return 4;
    }

    @Override
    public Object productElement(int n) {
      return switch (n) {
        case 0 -> child;
        case 1 -> specJson;
        case 2 -> input;
        case 3 -> output;
        default -> throw new IndexOutOfBoundsException(n);
      };
    }

    @Override
    public boolean canEqual(Object that) {
      return that instanceof Node;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Node n && child.equals(n.child) && specJson.equals(n.specJson)
          && input.equals(n.input) && output.equals(n.output);
    }

    @Override
    public int hashCode() {
      return Objects.hash(child, specJson, input, output);
    }
  }

  /** The physical operator: {@link #process} over each partition of its child's rows. */
  public static final class Exec extends SparkPlan {
    private static final long serialVersionUID = 1L;
    private final SparkPlan child;
    private final LocalGroupAggregate fn;
    private final Seq<Attribute> output;

    public Exec(SparkPlan child, LocalGroupAggregate fn, Seq<Attribute> output) {
      this.child = child;
      this.fn = fn;
      this.output = output;
    }

    @Override
    public RDD<InternalRow> doExecute() {
      LocalGroupAggregate local = fn;
      return child.execute().toJavaRDD().mapPartitions(local::process).rdd();
    }

    @Override
    public Seq<Attribute> output() {
      return output;
    }

    @Override
    public AttributeSet producedAttributes() {
      return produced(output);
    }

    @Override
    public Seq<SparkPlan> children() {
      return CollectionConverters.asScala(List.of(child)).toList();
    }

    @Override
    public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> children) {
      return new Exec(children.apply(0), fn, output);
    }

    @Override
    public String nodeName() {
      return "LocalGroupAggregate";
    }

    @Override
    public int productArity() {
      return 3;
    }

    @Override
    public Object productElement(int n) {
      return switch (n) {
        case 0 -> child;
        case 1 -> fn;
        case 2 -> output;
        default -> throw new IndexOutOfBoundsException(n);
      };
    }

    @Override
    public boolean canEqual(Object that) {
      return that instanceof Exec;
    }
  }

  /** Plans a {@link Node} as an {@link Exec}; registered per session by {@link #apply}. */
  public static final class Strategy extends SparkStrategy {
    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
      if (!(plan instanceof Node node)) {
        return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
      }
      SparkPlan child = planLater(node.child);
      if (!node.child.output().equals(node.input)) { // a rule reordered or pruned the union
        @SuppressWarnings("unchecked")
        Seq<NamedExpression> columns = (Seq<NamedExpression>) (Seq<?>) node.input;
        child = new ProjectExec(columns, child);
      }
      SQLConf conf = SQLConf.get();
      LocalGroupAggregate fn = of(node.specJson, DataTypeUtils.fromAttributes(node.input),
          conf.sessionLocalTimeZone(), conf.datetimeJava8ApiEnabled());
      return CollectionConverters.asScala(List.<SparkPlan>of(new Exec(child, fn, node.output)))
          .toList();
    }

    /** Adds the strategy to the session's extra strategies, once. */
    static void register(SparkSession session) {
      var experimental = session.experimental();
      synchronized (experimental) {
        List<SparkStrategy> strategies =
            new ArrayList<>(CollectionConverters.asJava(experimental.extraStrategies()));
        for (SparkStrategy s : strategies) {
          if (s instanceof Strategy) return;
        }
        strategies.add(new Strategy());
        experimental.extraStrategies_$eq(CollectionConverters.asScala(strategies).toList());
      }
    }
  }
}

package tableapi.serverext;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CreateNamedStruct;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.GetStructField;
import org.apache.spark.sql.catalyst.expressions.MutableProjection;
import org.apache.spark.sql.catalyst.expressions.MutableProjection$;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression$;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters$;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
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
 * <p>The {@code local_window_aggregate} relation is the same phase for a two-phase window
 * aggregation (Flink's LocalWindowAggregate): grouped by the keys and {@code __t} (the union's
 * column after the keys, the row's slice as its last millisecond), one bundle per task and
 * micro-batch; {@link WindowAggregate} merges the partials into its slices.
 *
 * <p>It runs as a physical operator of its own ({@link Exec}, planned by {@link Strategy} from
 * the logical {@link Node}) over Spark's internal rows, as Spark's partial aggregation does: a
 * single key is the map's key as it is (else the key columns in binary, an {@code UnsafeRow}),
 * and only the fields the accumulators read are read, as primitives when every call is a count
 * or an integral sum ({@link AggsHandle#integral}). When the union is a projection (as it is
 * over a source), the phase evaluates the projection's expressions itself over the projection's
 * input ({@link #flat}): no union row, with its {@code __in0} struct, is built per input row, and
 * a plain column is read in place. (Measured on the insert-only bench: a {@code mapPartitions}
 * over {@code Row}s that converted every field was most of this phase's time; building the union
 * row ~0.07 s per 1M rows; boxing each value ~5% of the stage's samples.)
 */
public final class LocalGroupAggregate implements Serializable {
  private static final long serialVersionUID = 1L;

  private final AggsHandle aggs;
  private final int bundleSize;
  private final StructType out;
  private final DataType[] keyTypes;
  private final int kindAt; // -1: an insert-only union (every row +I)
  private final int inAt; // __in0 in the input
  private final int structAt; // __in0 in the output
  private final int[] read; // the fields of __in0 the accumulators read
  private final DataType[] readTypes;
  private final boolean singleKey; // one key column, its values compared as they are
  private static final Object NULL_KEY = new Object(); // a NULL single key (a map has no null)

  private LocalGroupAggregate(AggsHandle aggs, int keyCount, int bundleSize, StructType input) {
    this.aggs = aggs;
    this.bundleSize = bundleSize;
    this.out = output(input, keyCount);
    this.keyTypes = new DataType[keyCount];
    for (int i = 0; i < keyCount; i++) keyTypes[i] = input.fields()[i].dataType();
    this.kindAt = List.of(input.fieldNames()).indexOf(Wire.KIND);
    this.inAt = input.fieldIndex(Wire.INPUT_PREFIX + 0);
    this.structAt = keyCount + 1;
    this.singleKey = keyCount == 1 && (keyTypes[0] instanceof StringType
        || keyTypes[0] instanceof LongType || keyTypes[0] instanceof IntegerType);
    this.read = aggs.foldedFields();
    this.readTypes = new DataType[read.length];
    StructType row = aggs.row();
    for (int j = 0; j < read.length; j++) readTypes[j] = row.fields()[read[j]].dataType();
  }

  /**
   * The local phase over an input of schema {@code input}, for the aggregate spec or the
   * window aggregate spec (the {@code local_window_aggregate} relation: grouped by the keys and
   * the slice, {@code __t}, the union's column after the keys; one bundle per task and
   * micro-batch, as Flink's LocalSlicingWindowAggOperator buffers until the watermark).
   */
  static LocalGroupAggregate of(String specJson, StructType input, String timeZone,
      boolean java8Time) {
    Specs.Envelope envelope = Specs.Envelope.parse(specJson);
    Operator.Request request = new Operator.Request(envelope, input, timeZone, java8Time);
    if (envelope.root().has("window_aggregate")) {
      WindowAggregate window = WindowAggregate.of(request, true);
      int keys = Math.max(window.keyCount(), 1);
      if (input.fields().length <= keys || !input.fields()[keys].name().equals(Wire.TIME)) {
        throw new IllegalArgumentException("the local phase of a window aggregation groups by "
            + "the keys then " + Wire.TIME + " (the slice); its input has "
            + List.of(input.fieldNames()));
      }
      return new LocalGroupAggregate(window.aggs(), keys + 1, Integer.MAX_VALUE, input);
    }
    GroupAggregate agg = GroupAggregate.of(request, true);
    // A global aggregate (no group key) is grouped by the union's one constant key column.
    return new LocalGroupAggregate(agg.aggs(), Math.max(agg.keyCount(), 1), agg.bundleSize(),
        input);
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
   * The expressions of the row {@link #process} reads, over the union's columns ({@code
   * column(i)}: the expression of the union's column {@code i}): the keys, [{@code __kind}],
   * then the fields of {@code __in0} the accumulators read. When the union is a projection the
   * operator absorbs ({@link Strategy}), those are the projection's own expressions: a field of
   * {@code __in0} is its struct's expression for that field, so no union row (with its struct)
   * is built per input row, only this flat row of the values the phase reads.
   */
  List<Expression> flat(IntFunction<Expression> column) {
    List<Expression> exprs = new ArrayList<>();
    for (int i = 0; i < keyTypes.length; i++) exprs.add(column.apply(i));
    if (kindAt >= 0) exprs.add(column.apply(kindAt));
    Expression row = column.apply(inAt);
    while (row instanceof Alias a) row = a.child();
    for (int f : read) {
      exprs.add(row instanceof CreateNamedStruct struct
          ? struct.valExprs().apply(f)
          : new GetStructField(row, f, scala.Option.empty()));
    }
    return exprs;
  }

  /**
   * The local phase over one task's rows of {@code input} (partition {@code partition}), each
   * read as the row {@code exprs} (over {@code input}, made by {@link #flat}) make of it: where
   * every one is a column of {@code input}, the values are read in place; else each row is
   * projected first.
   */
  Iterator<InternalRow> process(Seq<Expression> exprs, Seq<Attribute> input, int partition,
      Iterator<InternalRow> rows) {
    int[] at = ordinals(CollectionConverters.asJava(exprs), CollectionConverters.asJava(input));
    if (at != null) return process(rows, at);
    MutableProjection project = MutableProjection$.MODULE$.create(exprs, input);
    project.initialize(partition);
    return process(new Iterator<>() {
      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public InternalRow next() {
        return project.apply(rows.next());
      }
    }, IntStream.range(0, exprs.size()).toArray());
  }

  /** The positions in {@code input} of {@code exprs}, or null when one is not a column. */
  private static int[] ordinals(List<Expression> exprs, List<Attribute> input) {
    int[] at = new int[exprs.size()];
    for (int j = 0; j < at.length; j++) {
      at[j] = -1;
      if (!(exprs.get(j) instanceof Attribute a)) return null;
      for (int i = 0; i < input.size() && at[j] < 0; i++) {
        if (input.get(i).exprId().equals(a.exprId())) at[j] = i;
      }
      if (at[j] < 0) return null;
    }
    return at;
  }

  /** The local phase over rows of the union's schema {@code input} (the tests' harness). */
  Iterator<InternalRow> processUnion(StructType input, Iterator<InternalRow> rows) {
    Seq<AttributeReference> columns = DataTypeUtils.toAttributes(input);
    @SuppressWarnings("unchecked")
    Seq<Attribute> attributes = (Seq<Attribute>) (Seq<?>) columns;
    return process(seq(flat(columns::apply)), attributes, 0, rows);
  }

  /**
   * The local phase over one task's rows, the values of {@link #flat}'s row at {@code at} in
   * each: the partial rows, a bundle's after another's. Calls that all fold as counts and
   * integral sums ({@link AggsHandle#integral}) fold primitives; others the values as
   * {@code Row} holds them.
   */
  private Iterator<InternalRow> process(Iterator<InternalRow> rows, int[] at) {
    aggs.init();
    int kind = kindAt < 0 ? -1 : at[keyTypes.length];
    int first = keyTypes.length + (kindAt < 0 ? 0 : 1); // the first read field in at
    if (aggs.integral()) {
      int[] args = aggs.callArgs();
      int[] argAt = new int[args.length]; // each call's argument in the input row (-1: none)
      DataType[] argTypes = new DataType[args.length];
      boolean[] sums = new boolean[args.length];
      for (int i = 0; i < args.length; i++) {
        int j = Arrays.binarySearch(read, args[i]);
        argAt[i] = args[i] < 0 ? -1 : at[first + j];
        argTypes[i] = args[i] < 0 ? null : readTypes[j];
        sums[i] = aggs.sums(i);
      }
      return fold(rows, at, kind, () -> aggs.new Counts(), (p, r, sign) -> {
        p.rows += sign;
        for (int i = 0; i < argAt.length; i++) {
          int f = argAt[i];
          if (f < 0 || r.isNullAt(f)) continue;
          p.counts[i] += sign;
          if (sums[i]) {
            p.sums[i] += sign * integral(r, f, argTypes[i]);
            p.summed[i] = true;
          }
        }
      }, AggsHandle.Counts::accs);
    }
    boolean java8Time = aggs.java8Time();
    Object[] values = new Object[aggs.row().fields().length];
    return fold(rows, at, kind, () -> aggs.new Accs(), (accs, r, sign) -> {
      for (int j = 0; j < read.length; j++) {
        int i = at[first + j];
        values[read[j]] = r.isNullAt(i) ? null : external(r, i, readTypes[j], java8Time);
      }
      accs.fold(values, sign > 0);
    }, accs -> accs);
  }

  /** How a key's partial takes one input row, {@code sign} 1 (accumulate) or -1 (retract). */
  private interface Fold<P> {
    void row(P partial, InternalRow r, long sign);
  }

  /**
   * Folds each row into its key's partial ({@code fresh} for a new key), and emits the partials
   * (as {@code accs} makes them accumulators) when a bundle is full and at the end.
   */
  private <P> Iterator<InternalRow> fold(Iterator<InternalRow> rows, int[] at, int kind,
      Supplier<P> fresh, Fold<P> fold, Function<P, AggsHandle.Accs> accs) {
    List<Expression> keyColumns = new ArrayList<>();
    for (int i = 0; i < keyTypes.length; i++) {
      keyColumns.add(new BoundReference(at[i], keyTypes[i], true));
    }
    UnsafeProjection keyOf = singleKey ? null : UnsafeProjection.create(seq(keyColumns));
    UnsafeProjection toUnsafe = UnsafeProjection.create(out);
    int keyAt = at[0];
    int bundleSize = this.bundleSize;
    Map<Object, P> partials = new LinkedHashMap<>();
    List<InternalRow> result = new ArrayList<>();
    int n = 0;
    while (rows.hasNext()) {
      InternalRow r = rows.next();
      // One key of a type with value equality: the value itself (a view into the input row,
      // copied when kept); else the key columns as an UnsafeRow (reused by the projection).
      Object key = !singleKey ? keyOf.apply(r) : r.isNullAt(keyAt) ? NULL_KEY : single(r, keyAt);
      P partial = partials.get(key);
      if (partial == null) {
        partial = fresh.get();
        partials.put(kept(key), partial);
      }
      fold.row(partial, r, Rows.accumulates(kind < 0 ? Wire.INSERT : r.getByte(kind)) ? 1 : -1);
      if (++n == bundleSize) { // the bundle is full: its partials go, a new one starts
        flush(partials, accs, result, toUnsafe);
        n = 0;
      }
    }
    flush(partials, accs, result, toUnsafe);
    return result.iterator();
  }

  /** An integral field (not null) as a long. */
  private static long integral(InternalRow r, int i, DataType t) {
    if (t instanceof IntegerType) return r.getInt(i);
    if (t instanceof LongType) return r.getLong(i);
    return t instanceof ShortType ? r.getShort(i) : r.getByte(i);
  }

  /** The one key column's value (not null, at {@code i}), read by its type's own getter. */
  private Object single(InternalRow r, int i) {
    DataType t = keyTypes[0];
    if (t instanceof StringType) return r.getUTF8String(i);
    return t instanceof LongType ? (Object) r.getLong(i) : (Object) r.getInt(i);
  }

  /** A map key that outlives its input row. */
  private static Object kept(Object key) {
    if (key instanceof UnsafeRow row) return row.copy();
    if (key instanceof UTF8String string) return string.clone();
    return key; // boxed: already its own
  }

  private <P> void flush(Map<Object, P> partials, Function<P, AggsHandle.Accs> accs,
      List<InternalRow> result, UnsafeProjection toUnsafe) {
    for (Map.Entry<Object, P> e : partials.entrySet()) {
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
      row.update(structAt + 1, aggs.encode(accs.apply(e.getValue())));
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
    return "keys=" + keyTypes.length + ", bundle_size=" + bundleSize;
  }

  // -- the operator in Spark's planner ---------------------------------------------------------

  /** A Java list as Spark's immutable Seq. */
  private static Seq<Expression> seq(List<Expression> exprs) {
    return CollectionConverters.asScala(exprs).toList();
  }

  /** The logical node: its child (the union), the spec, the child's columns, its output. */
  public static final class Node extends PluginNodes.Logical {
    private static final long serialVersionUID = 1L;
    private final String specJson;
    private final Seq<Attribute> input; // what it reads: all of the union (for column pruning)

    public Node(LogicalPlan child, String specJson, Seq<Attribute> input, Seq<Attribute> output) {
      super("LocalGroupAggregate", child, output);
      this.specJson = specJson;
      this.input = input;
    }

    @Override
    protected Object[] fields() {
      return new Object[] {specJson, input, output()};
    }

    @Override
    public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> children) {
      return new Node(children.apply(0), specJson, input, output());
    }
  }

  /**
   * The physical operator: {@link #process} over each partition of its child's rows, each
   * projected by {@code reads} (over the child's columns) into the row the phase reads.
   */
  public static final class Exec extends PluginNodes.Physical {
    private static final long serialVersionUID = 1L;
    private final LocalGroupAggregate fn;
    private final Seq<Expression> reads;

    public Exec(SparkPlan child, LocalGroupAggregate fn, Seq<Expression> reads,
        Seq<Attribute> output) {
      super("LocalGroupAggregate", child, output);
      this.fn = fn;
      this.reads = reads;
    }

    @Override
    protected Object[] fields() {
      return new Object[] {fn, reads, output()};
    }

    @Override
    public RDD<InternalRow> doExecute() {
      LocalGroupAggregate local = fn;
      Seq<Expression> exprs = reads;
      Seq<Attribute> input = child.output();
      return child.execute().toJavaRDD()
          .mapPartitionsWithIndex((i, rows) -> local.process(exprs, input, i, rows), false)
          .rdd();
    }

    @Override
    public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> children) {
      return new Exec(children.apply(0), fn, reads, output());
    }
  }

  /** Plans a {@link Node} as an {@link Exec}; registered per session by {@link #apply}. */
  public static final class Strategy extends SparkStrategy {
    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
      if (!(plan instanceof Node node)) {
        return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
      }
      SQLConf conf = SQLConf.get();
      LocalGroupAggregate fn = of(node.specJson, DataTypeUtils.fromAttributes(node.input),
          conf.sessionLocalTimeZone(), conf.datetimeJava8ApiEnabled());
      // The union's columns by id: a projection's own expressions when the union is one the
      // phase can absorb (it then reads the projection's input), else the child's columns.
      Map<ExprId, Expression> columns = projected(node.child, node.input);
      LogicalPlan read = columns != null ? node.child.children().apply(0) : node.child;
      if (columns == null) {
        columns = new HashMap<>();
        for (Attribute a : CollectionConverters.asJava(read.output())) columns.put(a.exprId(), a);
      }
      Map<ExprId, Expression> byId = columns;
      List<Expression> reads = fn.flat(i -> {
        Attribute a = node.input.apply(i);
        Expression e = byId.get(a.exprId());
        if (e == null) throw new IllegalStateException("the union has no column " + a);
        return e;
      });
      if (read != node.child) { // only the columns the reads use, for the scan to prune the rest
        Set<ExprId> used = new HashSet<>();
        for (Expression e : reads) {
          for (Attribute a : CollectionConverters.asJava(e.references().toSeq())) {
            used.add(a.exprId());
          }
        }
        List<NamedExpression> kept = new ArrayList<>();
        for (Attribute a : CollectionConverters.asJava(read.output())) {
          if (used.contains(a.exprId())) kept.add(a);
        }
        read = new Project(CollectionConverters.asScala(kept).toList(), read);
      }
      SparkPlan exec = new Exec(planLater(read), fn, seq(reads), node.output());
      return CollectionConverters.asScala(List.<SparkPlan>of(exec)).toList();
    }

    /**
     * The expressions by id of {@code plan} when it is a projection the phase can evaluate
     * itself: every union column is one of them, and none holds a subquery (which only a
     * projection's own operator prepares); else null.
     */
    private static Map<ExprId, Expression> projected(LogicalPlan plan, Seq<Attribute> input) {
      if (!(plan instanceof Project p)) return null;
      Map<ExprId, Expression> columns = new HashMap<>();
      for (NamedExpression e : CollectionConverters.asJava(p.projectList())) {
        if (SubqueryExpression$.MODULE$.hasSubquery((Expression) e)) return null;
        columns.put(e.exprId(), e instanceof Alias a ? a.child() : (Expression) e);
      }
      for (Attribute a : CollectionConverters.asJava(input)) {
        if (!columns.containsKey(a.exprId())) return null;
      }
      return columns;
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

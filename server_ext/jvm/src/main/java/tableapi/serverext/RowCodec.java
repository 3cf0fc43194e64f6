package tableapi.serverext;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.Period;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.YearMonthIntervalType;
import scala.Tuple2;
import scala.collection.Iterator;
import scala.collection.immutable.ArraySeq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The binary state value of one grouping key: both sides' entries, in state order.
 *
 * <pre>
 *   byte    FORMAT
 *   2 x     varint n; n x (row, varint count, zigzag associations, zigzag written_at_ms)
 *   row     null bitmap (1 bit per field), then each non-null field's value
 * </pre>
 *
 * Values keep the Java types that {@code Encoders.row} gives and takes, so a decoded row is
 * emitted as it is and compares equal to an input row with the same values.
 */
final class RowCodec {
  private static final byte FORMAT = 1;

  private final Field[] left;
  private final Field[] right;

  RowCodec(JoinSpec spec) {
    left = fields(spec.left.schema(), spec.java8Time);
    right = fields(spec.right.schema(), spec.java8Time);
  }

  /** Fails (naming the column and type) when a schema holds a type the state cannot keep. */
  static void check(StructType schema) {
    fields(schema, false);
  }

  byte[] encode(Map<Object, SideView.Entry> l, Map<Object, SideView.Entry> r) {
    Out out = new Out(64 + 32 * (l.size() + r.size()));
    out.buf[out.n++] = FORMAT;
    writeSide(out, left, l);
    writeSide(out, right, r);
    return out.bytes();
  }

  void decode(
      byte[] bytes,
      SideView lv,
      Map<Object, SideView.Entry> l,
      SideView rv,
      Map<Object, SideView.Entry> r) {
    In in = new In(bytes);
    byte format = in.buf[in.pos++];
    if (format != FORMAT) {
      throw new IllegalStateException("unknown join state format " + format);
    }
    readSide(in, left, lv, l);
    readSide(in, right, rv, r);
  }

  /** One schema's row format, for the state values of the other operators. */
  static final class RowFormat {
    private final Field[] fields;
    final int width;

    RowFormat(StructType schema, boolean java8) {
      fields = fields(schema, java8);
      width = fields.length;
    }

    void write(Out out, Object[] row) {
      writeRow(out, fields, row);
    }

    Object[] read(In in) {
      return readRow(in, fields);
    }
  }

  private static void writeSide(Out out, Field[] fields, Map<Object, SideView.Entry> rows) {
    out.varint(rows.size());
    for (SideView.Entry e : rows.values()) {
      writeRow(out, fields, e.row);
      out.varint(e.count);
      out.zigzag(e.assoc);
      out.zigzag(e.written);
    }
  }

  private static void readSide(
      In in, Field[] fields, SideView view, Map<Object, SideView.Entry> rows) {
    long n = in.varint();
    for (long i = 0; i < n; i++) {
      Object[] row = readRow(in, fields);
      int count = (int) in.varint();
      int assoc = (int) in.zigzag();
      long written = in.zigzag();
      rows.put(view.keyOf(row), new SideView.Entry(row, count, assoc, written));
    }
  }

  private static void writeRow(Out out, Field[] fields, Object[] row) {
    int mask = out.reserve((fields.length + 7) / 8);
    for (int i = 0; i < fields.length; i++) {
      if (row[i] == null) {
        out.buf[mask + i / 8] |= (byte) (1 << (i % 8));
      } else {
        fields[i].write(out, row[i]);
      }
    }
  }

  private static Object[] readRow(In in, Field[] fields) {
    int mask = in.pos;
    in.pos += (fields.length + 7) / 8;
    Object[] row = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) {
      if ((in.buf[mask + i / 8] & (1 << (i % 8))) == 0) row[i] = fields[i].read(in);
    }
    return row;
  }

  // -- one value per type ----------------------------------------------------------------------

  private interface Writer {
    void write(Out out, Object value);
  }

  private interface Reader {
    Object read(In in);
  }

  private record Field(Writer writer, Reader reader) {
    void write(Out out, Object value) {
      writer.write(out, value);
    }

    Object read(In in) {
      return reader.read(in);
    }
  }

  private static Field[] fields(StructType schema, boolean java8) {
    Field[] out = new Field[schema.fields().length];
    for (int i = 0; i < out.length; i++) {
      DataType t = schema.fields()[i].dataType();
      try {
        out[i] = field(t, java8);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "column `" + schema.fields()[i].name() + "`: " + e.getMessage(), e);
      }
    }
    return out;
  }

  private static Field field(DataType t, boolean java8) {
    if (t instanceof BooleanType) {
      return field((o, v) -> o.raw((Boolean) v ? 1 : 0, 1), in -> in.raw(1) != 0);
    }
    if (t instanceof ByteType) {
      return field((o, v) -> o.raw((Byte) v, 1), in -> (byte) in.raw(1));
    }
    if (t instanceof ShortType) {
      return field((o, v) -> o.zigzag((Short) v), in -> (short) in.zigzag());
    }
    if (t instanceof IntegerType) {
      return field((o, v) -> o.zigzag((Integer) v), in -> (int) in.zigzag());
    }
    if (t instanceof LongType) {
      return field((o, v) -> o.zigzag((Long) v), In::zigzag);
    }
    if (t instanceof FloatType) {
      return field(
          (o, v) -> o.raw(Float.floatToRawIntBits((Float) v), 4),
          in -> Float.intBitsToFloat((int) in.raw(4)));
    }
    if (t instanceof DoubleType) {
      return field(
          (o, v) -> o.raw(Double.doubleToRawLongBits((Double) v), 8),
          in -> Double.longBitsToDouble(in.raw(8)));
    }
    if (t instanceof DecimalType) {
      return field(
          (o, v) -> {
            BigDecimal d = (BigDecimal) v;
            o.zigzag(d.scale());
            o.bytes(d.unscaledValue().toByteArray());
          },
          in -> {
            int scale = (int) in.zigzag();
            return new BigDecimal(new BigInteger(in.bytes()), scale);
          });
    }
    if (t instanceof StringType) { // instanceof: collations make other StringType instances
      return field(
          (o, v) -> o.bytes(((String) v).getBytes(StandardCharsets.UTF_8)),
          in -> new String(in.bytes(), StandardCharsets.UTF_8));
    }
    if (t instanceof BinaryType) {
      return field((o, v) -> o.bytes((byte[]) v), In::bytes);
    }
    if (t instanceof DateType) {
      return field(
          (o, v) ->
              o.zigzag(
                  v instanceof LocalDate d
                      ? DateTimeUtils.localDateToDays(d)
                      : DateTimeUtils.fromJavaDate((java.sql.Date) v)),
          in -> {
            int days = (int) in.zigzag();
            return java8 ? DateTimeUtils.daysToLocalDate(days) : DateTimeUtils.toJavaDate(days);
          });
    }
    if (t instanceof TimestampType) {
      return field(
          (o, v) ->
              o.zigzag(
                  v instanceof Instant i
                      ? DateTimeUtils.instantToMicros(i)
                      : DateTimeUtils.fromJavaTimestamp((Timestamp) v)),
          in -> {
            long micros = in.zigzag();
            return java8
                ? DateTimeUtils.microsToInstant(micros)
                : DateTimeUtils.toJavaTimestamp(micros);
          });
    }
    if (t instanceof TimestampNTZType) {
      return field(
          (o, v) -> o.zigzag(DateTimeUtils.localDateTimeToMicros((LocalDateTime) v)),
          in -> DateTimeUtils.microsToLocalDateTime(in.zigzag()));
    }
    if (t instanceof DayTimeIntervalType) {
      return field(
          (o, v) -> {
            Duration d = (Duration) v;
            o.zigzag(d.getSeconds());
            o.varint(d.getNano());
          },
          in -> Duration.ofSeconds(in.zigzag(), in.varint()));
    }
    if (t instanceof YearMonthIntervalType) {
      return field(
          (o, v) -> o.zigzag(((Period) v).toTotalMonths()),
          in -> Period.ofMonths((int) in.zigzag()).normalized());
    }
    if (t instanceof NullType) {
      return field((o, v) -> {}, in -> null);
    }
    if (t instanceof ArrayType a) {
      Field element = field(a.elementType(), java8);
      return field(
          (o, v) -> {
            List<Object> items = elements(v);
            o.varint(items.size());
            for (Object item : items) nullable(o, element, item);
          },
          in -> {
            Object[] items = new Object[(int) in.varint()];
            for (int i = 0; i < items.length; i++) items[i] = nullable(in, element);
            return ArraySeq.unsafeWrapArray(items);
          });
    }
    if (t instanceof MapType m) {
      Field key = field(m.keyType(), java8);
      Field value = field(m.valueType(), java8);
      return field(
          (o, v) -> {
            scala.collection.Map<?, ?> map = (scala.collection.Map<?, ?>) v;
            o.varint(map.size());
            for (Iterator<? extends Tuple2<?, ?>> it = map.iterator(); it.hasNext(); ) {
              Tuple2<?, ?> e = it.next();
              key.write(o, e._1());
              nullable(o, value, e._2());
            }
          },
          in -> {
            int n = (int) in.varint();
            Map<Object, Object> map = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) map.put(key.read(in), nullable(in, value));
            return CollectionConverters.asScala(map);
          });
    }
    if (t instanceof StructType s) {
      Field[] nested = fields(s, java8);
      return field(
          (o, v) -> {
            Row row = (Row) v;
            Object[] values = new Object[row.length()];
            for (int i = 0; i < values.length; i++) values[i] = row.get(i);
            writeRow(o, nested, values);
          },
          in -> new GenericRowWithSchema(readRow(in, nested), s));
    }
    throw new IllegalArgumentException(
        "the JVM join operators cannot keep "
            + t.sql()
            + " values in state; cast the column to a supported type");
  }

  private static Field field(Writer w, Reader r) {
    return new Field(w, r);
  }

  private static void nullable(Out out, Field f, Object v) {
    out.raw(v == null ? 0 : 1, 1);
    if (v != null) f.write(out, v);
  }

  private static Object nullable(In in, Field f) {
    return in.raw(1) == 0 ? null : f.read(in);
  }

  private static List<Object> elements(Object v) {
    List<Object> items = new ArrayList<>();
    if (v instanceof scala.collection.Seq<?> s) {
      for (Iterator<?> it = s.iterator(); it.hasNext(); ) items.add(it.next());
    } else if (v instanceof Object[] a) {
      items.addAll(Arrays.asList(a));
    } else if (v instanceof List<?> l) {
      items.addAll(l);
    } else {
      throw new IllegalArgumentException("not an array value: " + v.getClass());
    }
    return items;
  }

  // -- bytes -----------------------------------------------------------------------------------

  static final class Out {
    byte[] buf;
    int n;

    Out(int capacity) {
      buf = new byte[capacity];
    }

    private void room(int more) {
      if (n + more > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, n + more));
    }

    int reserve(int size) {
      room(size);
      int at = n;
      Arrays.fill(buf, n, n + size, (byte) 0);
      n += size;
      return at;
    }

    void raw(long v, int size) { // little endian
      room(size);
      for (int i = 0; i < size; i++) buf[n++] = (byte) (v >>> (8 * i));
    }

    void varint(long v) {
      room(10);
      while ((v & ~0x7FL) != 0) {
        buf[n++] = (byte) ((v & 0x7F) | 0x80);
        v >>>= 7;
      }
      buf[n++] = (byte) v;
    }

    void zigzag(long v) {
      varint((v << 1) ^ (v >> 63));
    }

    void bytes(byte[] b) {
      varint(b.length);
      room(b.length);
      System.arraycopy(b, 0, buf, n, b.length);
      n += b.length;
    }

    byte[] bytes() {
      return Arrays.copyOf(buf, n);
    }
  }

  static final class In {
    final byte[] buf;
    int pos;

    In(byte[] buf) {
      this.buf = buf;
    }

    long raw(int size) {
      long v = 0;
      for (int i = 0; i < size; i++) v |= (buf[pos++] & 0xFFL) << (8 * i);
      return v;
    }

    long varint() {
      long v = 0;
      for (int shift = 0; ; shift += 7) {
        byte b = buf[pos++];
        v |= (long) (b & 0x7F) << shift;
        if (b >= 0) return v;
      }
    }

    long zigzag() {
      long v = varint();
      return (v >>> 1) ^ -(v & 1);
    }

    byte[] bytes() {
      int len = (int) varint();
      byte[] b = Arrays.copyOfRange(buf, pos, pos + len);
      pos += len;
      return b;
    }
  }
}

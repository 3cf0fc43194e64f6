package tableapi.serverext;

import java.math.BigDecimal;
import java.util.Arrays;
import org.apache.spark.sql.Row;
import scala.Tuple2;
import scala.collection.Iterator;

/**
 * Value equality for state keys, as the Python processors have it (Python's {@code ==} on
 * frozen values): by content for binary, arrays, maps and structs; {@code -0.0 == 0.0};
 * decimals by value. One deliberate difference: NaN equals NaN here (as in Flink's binary rows
 * and Spark's {@code Row.equals}); in Python two NaN objects never do, so a retraction of a row
 * holding NaN finds nothing there.
 */
final class Values {
  private Values() {}

  static boolean same(Object a, Object b) {
    if (a == b) return true;
    if (a == null || b == null) return false;
    if (plain(a.getClass())) return a.equals(b);
    if (a instanceof Double x && b instanceof Double y) return sameDouble(x, y);
    if (a instanceof Float x && b instanceof Float y) return sameDouble(x, y);
    if (a instanceof BigDecimal x && b instanceof BigDecimal y) return x.compareTo(y) == 0;
    if (a instanceof byte[] x && b instanceof byte[] y) return Arrays.equals(x, y);
    if (a instanceof Row x && b instanceof Row y) return sameRow(x, y);
    if (a instanceof scala.collection.Map<?, ?> x && b instanceof scala.collection.Map<?, ?> y) {
      return sameMap(x, y);
    }
    if (a instanceof scala.collection.Seq<?> x && b instanceof scala.collection.Seq<?> y) {
      return sameSeq(x, y);
    }
    return a.equals(b);
  }

  static int hash(Object a) {
    if (a == null) return 0;
    if (plain(a.getClass())) return a.hashCode();
    if (a instanceof Double d) return hashDouble(d);
    if (a instanceof Float f) return hashDouble(f);
    if (a instanceof BigDecimal d) return d.stripTrailingZeros().hashCode();
    if (a instanceof byte[] b) return Arrays.hashCode(b);
    if (a instanceof Row r) {
      int h = 1;
      for (int i = 0; i < r.length(); i++) h = 31 * h + hash(r.get(i));
      return h;
    }
    if (a instanceof scala.collection.Map<?, ?> m) {
      int h = 0; // order-insensitive
      for (Iterator<? extends Tuple2<?, ?>> it = m.iterator(); it.hasNext(); ) {
        Tuple2<?, ?> e = it.next();
        h += hash(e._1()) ^ hash(e._2());
      }
      return h;
    }
    if (a instanceof scala.collection.Seq<?> s) {
      int h = 1;
      for (Iterator<?> it = s.iterator(); it.hasNext(); ) h = 31 * h + hash(it.next());
      return h;
    }
    return a.hashCode();
  }

  /**
   * The usual key and field types, whose own equals and hashCode are the value's: one class
   * compare each, before the interface tests below (Row, Scala collections), which scan the
   * class's supertypes for every value of every stored row (measured: most of a key's hashing).
   */
  private static boolean plain(Class<?> c) {
    return c == Long.class || c == Integer.class || c == String.class || c == Short.class
        || c == Byte.class || c == Boolean.class || c == java.sql.Timestamp.class
        || c == java.sql.Date.class || c == java.time.Instant.class
        || c == java.time.LocalDate.class || c == java.time.LocalDateTime.class;
  }

  private static boolean sameDouble(double x, double y) {
    return x == y || (Double.isNaN(x) && Double.isNaN(y));
  }

  private static int hashDouble(double d) {
    return d == 0.0 ? 0 : Double.hashCode(d); // -0.0 and 0.0 are equal, so hash alike
  }

  private static boolean sameRow(Row x, Row y) {
    if (x.length() != y.length()) return false;
    for (int i = 0; i < x.length(); i++) if (!same(x.get(i), y.get(i))) return false;
    return true;
  }

  private static boolean sameSeq(scala.collection.Seq<?> x, scala.collection.Seq<?> y) {
    if (x.length() != y.length()) return false;
    Iterator<?> a = x.iterator();
    Iterator<?> b = y.iterator();
    while (a.hasNext()) if (!same(a.next(), b.next())) return false;
    return true;
  }

  private static boolean sameMap(scala.collection.Map<?, ?> x, scala.collection.Map<?, ?> y) {
    if (x.size() != y.size()) return false;
    for (Iterator<? extends Tuple2<?, ?>> a = x.iterator(); a.hasNext(); ) {
      Tuple2<?, ?> e = a.next();
      boolean found = false;
      for (Iterator<? extends Tuple2<?, ?>> b = y.iterator(); b.hasNext() && !found; ) {
        Tuple2<?, ?> f = b.next();
        found = same(e._1(), f._1()) && same(e._2(), f._2());
      }
      if (!found) return false;
    }
    return true;
  }

  /** Python's order of two {@code __seq} values (strings by code point, numbers by value). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static int compareSeq(Object a, Object b) {
    if (a instanceof String x && b instanceof String y) return compareCodePoints(x, y);
    if (a instanceof Number x && b instanceof Number y) {
      return Long.compare(x.longValue(), y.longValue());
    }
    if (a == null || b == null) {
      throw new IllegalArgumentException("__seq must not be null");
    }
    return ((Comparable) a).compareTo(b);
  }

  /** Strings ordered by Unicode code point, as Python orders them (Java's is by UTF-16 unit). */
  static int compareCodePoints(String x, String y) {
    int i = 0;
    int j = 0;
    while (i < x.length() && j < y.length()) {
      int a = x.codePointAt(i);
      int b = y.codePointAt(j);
      if (a != b) return Integer.compare(a, b);
      i += Character.charCount(a);
      j += Character.charCount(b);
    }
    return Integer.compare(x.length() - i, y.length() - j);
  }

  /** A tuple of values as a map key (a stored row, or its unique key). */
  static final class Tuple {
    final Object[] values;
    private final int hash;

    Tuple(Object[] values) {
      this.values = values;
      int h = 1;
      for (Object v : values) h = 31 * h + hash(v);
      this.hash = h;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Tuple t) || t.hash != hash || t.values.length != values.length) {
        return false;
      }
      for (int i = 0; i < values.length; i++) if (!same(values[i], t.values[i])) return false;
      return true;
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }
}

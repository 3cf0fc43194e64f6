package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;

/**
 * A residual join condition, compiled once into a tree of closures over {@code (left row, right
 * row)} and evaluated with SQL's three-valued logic: a row pair matches only when the tree is
 * TRUE. The same semantics as {@code server_ext/joins/condition.py}, which is the reference:
 *
 * <ul>
 *   <li>JSON form of the tree: {@code ["col", "l"|"r", index]}, {@code ["lit", value]}, {@code
 *       ["call", name, args...]}; literal values are JSON scalars or tagged objects {@code
 *       {"decimal": "1.50"}}, {@code {"date": days}}, {@code {"timestamp": micros}} (wall clock),
 *       {@code {"interval": micros}}, {@code {"binary": hex}}, {@code {"float": "nan"}};
 *   <li>values are evaluated as Python sees them: integers, floats, decimals (28 significant
 *       digits, half-even), strings (ordered by code point), dates, timestamps (wall clock in the
 *       session time zone) and intervals; a decimal meeting a float becomes a float;
 *   <li>{@code /} on two integers truncates toward zero, {@code mod} takes the dividend's sign,
 *       a zero divisor gives NULL; integer overflow fails (Python's integers do not overflow).
 * </ul>
 */
final class Condition {
  /** One node: its SQL value for a row pair (null is SQL NULL). */
  interface Expr {
    Object eval(Object[] l, Object[] r);
  }

  record Day(long days) {}

  record Micros(long micros) {}

  record Interval(long micros) {}

  static final Set<String> FUNCTIONS =
      Set.of(
          "=", "<>", "<", "<=", ">", ">=", "and", "or", "not", "is_null", "is_not_null",
          "is_not_distinct_from", "+", "-", "*", "/", "mod", "neg", "abs", "upper", "lower",
          "coalesce", "if");
  private static final MathContext PYTHON_DECIMAL = new MathContext(28, RoundingMode.HALF_EVEN);
  private static final long DAY = 86_400_000_000L;

  private final Expr root;

  private Condition(Expr root) {
    this.root = root;
  }

  /** The condition of a spec, or null when it has none. */
  static Condition compile(String json, String timeZone) {
    if (json == null) return null;
    ZoneId zone = ZoneId.of(timeZone);
    Compiler compiler = new Compiler(zone.normalized() == ZoneOffset.UTC ? null : zone);
    return new Condition(compiler.node(Specs.read(json)));
  }

  boolean test(Object[] left, Object[] right) {
    return Boolean.TRUE.equals(root.eval(left, right));
  }

  // -- compiling -------------------------------------------------------------------------------

  private record Compiler(ZoneId zone) {
    Expr node(JsonNode n) {
      if (!n.isArray() || n.isEmpty()) {
        throw new IllegalArgumentException("condition node must be a non-empty list, got " + n);
      }
      String tag = n.get(0).asText();
      switch (tag) {
        case "col" -> {
          int i = n.get(2).asInt();
          String side = n.get(1).asText();
          if (side.equals("l")) return (l, r) -> canon(l[i], zone);
          if (side.equals("r")) return (l, r) -> canon(r[i], zone);
          throw new IllegalArgumentException("column side must be 'l' or 'r', got " + side);
        }
        case "lit" -> {
          Object v = literal(n.get(1));
          return (l, r) -> v;
        }
        case "call" -> {
          String name = n.get(1).asText();
          List<Expr> args = new ArrayList<>();
          for (int i = 2; i < n.size(); i++) args.add(node(n.get(i)));
          return call(name, args);
        }
        default -> throw new IllegalArgumentException("unknown condition node " + tag);
      }
    }
  }

  static Object literal(JsonNode v) {
    if (v == null || v.isNull()) return null;
    if (v.isBoolean()) return v.booleanValue();
    if (v.isIntegralNumber()) {
      if (!v.canConvertToLong()) throw new IllegalArgumentException("integer too large: " + v);
      return v.longValue();
    }
    if (v.isNumber()) return v.doubleValue();
    if (v.isTextual()) return v.textValue();
    if (v.isObject() && v.size() == 1) {
      String tag = v.fieldNames().next();
      JsonNode x = v.get(tag);
      switch (tag) {
        case "decimal":
          return new BigDecimal(x.asText());
        case "date":
          return new Day(x.asLong());
        case "timestamp":
          return new Micros(x.asLong());
        case "interval":
          return new Interval(x.asLong());
        case "binary":
          return HexFormat.of().parseHex(x.asText());
        case "float":
          return Double.parseDouble(x.asText().replace("inf", "Infinity"));
        default:
          break;
      }
    }
    throw new IllegalArgumentException("unknown literal " + v);
  }

  /** A column value as the condition sees it (numbers widened, times as numbers). */
  static Object canon(Object v, ZoneId zone) {
    if (v == null || v instanceof Long || v instanceof String || v instanceof Double) return v;
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof Float f) return (double) f;
    if (v instanceof java.sql.Date d) return new Day(DateTimeUtils.fromJavaDate(d));
    if (v instanceof LocalDate d) return new Day(DateTimeUtils.localDateToDays(d));
    if (v instanceof Timestamp t) return new Micros(wall(DateTimeUtils.fromJavaTimestamp(t), zone));
    if (v instanceof Instant t) return new Micros(wall(DateTimeUtils.instantToMicros(t), zone));
    if (v instanceof LocalDateTime t) return new Micros(DateTimeUtils.localDateTimeToMicros(t));
    if (v instanceof Duration d) {
      return new Interval(d.getSeconds() * 1_000_000 + d.getNano() / 1000);
    }
    return v;
  }

  /** UTC micros as micros of the wall clock in {@code zone} (Python's naive datetimes). */
  private static long wall(long micros, ZoneId zone) {
    if (zone == null) return micros;
    Instant at = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000));
    return micros + zone.getRules().getOffset(at).getTotalSeconds() * 1_000_000L;
  }

  // -- functions -------------------------------------------------------------------------------

  private static Expr call(String name, List<Expr> args) {
    if (!FUNCTIONS.contains(name)) {
      throw new IllegalArgumentException(
          "unknown condition function " + name + "; known: " + FUNCTIONS);
    }
    return switch (name) {
      case "=" -> strict2(name, args, (a, b) -> eq(a, b));
      case "<>" -> strict2(name, args, (a, b) -> !eq(a, b));
      case "<" -> strict2(name, args, (a, b) -> ordered(a, b, c -> c < 0));
      case "<=" -> strict2(name, args, (a, b) -> ordered(a, b, c -> c <= 0));
      case ">" -> strict2(name, args, (a, b) -> ordered(a, b, c -> c > 0));
      case ">=" -> strict2(name, args, (a, b) -> ordered(a, b, c -> c >= 0));
      case "+" -> strict2(name, args, Condition::add);
      case "-" -> strict2(name, args, Condition::subtract);
      case "*" -> strict2(name, args, Condition::multiply);
      case "/" -> strict2(name, args, Condition::divide);
      case "mod" -> strict2(name, args, Condition::mod);
      case "neg" -> strict1(name, args, Condition::negate);
      case "abs" -> strict1(name, args, Condition::abs);
      case "not" -> strict1(name, args, a -> !truthy(a));
      case "upper" -> strict1(name, args, a -> string(a, name).toUpperCase(Locale.ROOT));
      case "lower" -> strict1(name, args, a -> string(a, name).toLowerCase(Locale.ROOT));
      case "is_null" -> {
        Expr a = one(name, args);
        yield (l, r) -> a.eval(l, r) == null;
      }
      case "is_not_null" -> {
        Expr a = one(name, args);
        yield (l, r) -> a.eval(l, r) != null;
      }
      case "is_not_distinct_from" -> {
        arity(name, args, 2);
        Expr a = args.get(0);
        Expr b = args.get(1);
        yield (l, r) -> {
          Object x = a.eval(l, r);
          Object y = b.eval(l, r);
          return x == null || y == null ? x == null && y == null : eq(x, y);
        };
      }
      case "and" -> {
        Expr[] xs = atLeast(name, args, 2);
        yield (l, r) -> {
          boolean unknown = false;
          for (Expr x : xs) {
            Object v = x.eval(l, r);
            if (Boolean.FALSE.equals(v)) return false; // FALSE decides whatever the rest is
            if (v == null) unknown = true;
          }
          return unknown ? null : true;
        };
      }
      case "or" -> {
        Expr[] xs = atLeast(name, args, 2);
        yield (l, r) -> {
          boolean unknown = false;
          for (Expr x : xs) {
            Object v = x.eval(l, r);
            if (Boolean.TRUE.equals(v)) return true;
            if (v == null) unknown = true;
          }
          return unknown ? null : false;
        };
      }
      case "coalesce" -> {
        Expr[] xs = atLeast(name, args, 1);
        yield (l, r) -> {
          for (Expr x : xs) {
            Object v = x.eval(l, r);
            if (v != null) return v;
          }
          return null;
        };
      }
      case "if" -> {
        arity(name, args, 3);
        Expr c = args.get(0);
        Expr t = args.get(1);
        Expr e = args.get(2);
        yield (l, r) -> Boolean.TRUE.equals(c.eval(l, r)) ? t.eval(l, r) : e.eval(l, r);
      }
      default -> throw new IllegalStateException(name);
    };
  }

  private interface Op2 {
    Object apply(Object a, Object b);
  }

  private interface Op1 {
    Object apply(Object a);
  }

  private interface Test {
    boolean test(int comparison);
  }

  /** NULL when either operand is NULL. */
  private static Expr strict2(String name, List<Expr> args, Op2 op) {
    arity(name, args, 2);
    Expr a = args.get(0);
    Expr b = args.get(1);
    return (l, r) -> {
      Object x = a.eval(l, r);
      if (x == null) return null;
      Object y = b.eval(l, r);
      return y == null ? null : op.apply(x, y);
    };
  }

  private static Expr strict1(String name, List<Expr> args, Op1 op) {
    Expr a = one(name, args);
    return (l, r) -> {
      Object x = a.eval(l, r);
      return x == null ? null : op.apply(x);
    };
  }

  private static Expr one(String name, List<Expr> args) {
    arity(name, args, 1);
    return args.get(0);
  }

  private static void arity(String name, List<Expr> args, int n) {
    if (args.size() != n) {
      throw new IllegalArgumentException(name + " takes " + n + " argument(s), got " + args.size());
    }
  }

  private static Expr[] atLeast(String name, List<Expr> args, int n) {
    if (args.size() < n) {
      throw new IllegalArgumentException(
          name + " takes at least " + n + " argument(s), got " + args.size());
    }
    return args.toArray(new Expr[0]);
  }

  // -- numbers ---------------------------------------------------------------------------------
  // Python's numeric tower as the reference uses it: int (Long), float (Double), Decimal
  // (BigDecimal); bool is an int. A Decimal meeting a float becomes a float (condition.py's
  // _numeric); an int meeting a float is compared exactly, as Python does.

  private static final int LONG = 0;
  private static final int DOUBLE = 1;
  private static final int DECIMAL = 2;

  private static int numeric(Object v) {
    if (v instanceof Long || v instanceof Boolean) return LONG;
    if (v instanceof Double) return DOUBLE;
    if (v instanceof BigDecimal) return DECIMAL;
    return -1;
  }

  private static long asLong(Object v) {
    return v instanceof Boolean b ? (b ? 1 : 0) : (Long) v;
  }

  private static double asDouble(Object v) {
    return v instanceof Double d ? d : v instanceof BigDecimal d ? d.doubleValue() : asLong(v);
  }

  private static BigDecimal asDecimal(Object v) {
    return v instanceof BigDecimal d ? d : BigDecimal.valueOf(asLong(v));
  }

  /** The type two numbers meet in (-1 when one is not a number). */
  private static int common(Object a, Object b) {
    int x = numeric(a);
    int y = numeric(b);
    if (x < 0 || y < 0) return -1;
    return x == DOUBLE || y == DOUBLE ? DOUBLE : Math.max(x, y);
  }

  /** a compared with b; null when unordered (NaN); fails on types Python cannot order. */
  private static Integer compare(Object a, Object b) {
    switch (common(a, b)) {
      case LONG:
        return Long.compare(asLong(a), asLong(b));
      case DECIMAL:
        return asDecimal(a).compareTo(asDecimal(b));
      case DOUBLE:
        if (numeric(a) == LONG) return negate(compareLongDouble(asLong(a), asDouble(b)));
        if (numeric(b) == LONG) return compareLongDouble(asLong(b), asDouble(a));
        double x = asDouble(a);
        double y = asDouble(b);
        return x < y ? -1 : x > y ? 1 : x == y ? 0 : null;
      default:
        break;
    }
    if (a instanceof String x && b instanceof String y) return Values.compareCodePoints(x, y);
    if (a instanceof byte[] x && b instanceof byte[] y) return Arrays.compareUnsigned(x, y);
    if (a instanceof Day x && b instanceof Day y) return Long.compare(x.days(), y.days());
    if (a instanceof Micros x && b instanceof Micros y) return Long.compare(x.micros(), y.micros());
    if (a instanceof Interval x && b instanceof Interval y) {
      return Long.compare(x.micros(), y.micros());
    }
    throw new IllegalArgumentException("cannot order " + typeName(a) + " and " + typeName(b));
  }

  private static Integer negate(Integer c) {
    return c == null ? null : -c;
  }

  /** d compared with l (note the order), exactly, as Python compares a float with an int. */
  private static Integer compareLongDouble(long l, double d) {
    if (Double.isNaN(d)) return null;
    if (Double.isInfinite(d)) return d > 0 ? 1 : -1;
    if (Math.abs(l) <= (1L << 53)) return d > l ? 1 : d < l ? -1 : 0;
    return new BigDecimal(d).compareTo(BigDecimal.valueOf(l));
  }

  private static boolean ordered(Object a, Object b, Test test) {
    Integer c = compare(a, b);
    return c != null && test.test(c);
  }

  private static boolean eq(Object a, Object b) {
    if (common(a, b) >= 0) {
      Integer c = compare(a, b);
      return c != null && c == 0;
    }
    if (a instanceof byte[] x && b instanceof byte[] y) return Arrays.equals(x, y);
    if (a.getClass() != b.getClass()) return false; // Python: 'a' == 1 is False, not an error
    return Values.same(a, b);
  }

  private static Object add(Object a, Object b) {
    switch (common(a, b)) {
      case LONG:
        return exact(() -> Math.addExact(asLong(a), asLong(b)));
      case DOUBLE:
        return asDouble(a) + asDouble(b);
      case DECIMAL:
        return asDecimal(a).add(asDecimal(b), PYTHON_DECIMAL);
      default:
        break;
    }
    if (a instanceof Interval x) {
      if (b instanceof Interval y) return new Interval(Math.addExact(x.micros(), y.micros()));
      return add(b, a);
    }
    if (b instanceof Interval y) {
      if (a instanceof Micros x) return new Micros(Math.addExact(x.micros(), y.micros()));
      if (a instanceof Day x) return new Day(x.days() + Math.floorDiv(y.micros(), DAY));
    }
    if (a instanceof String x && b instanceof String y) return x + y;
    throw unsupported("+", a, b);
  }

  private static Object subtract(Object a, Object b) {
    switch (common(a, b)) {
      case LONG:
        return exact(() -> Math.subtractExact(asLong(a), asLong(b)));
      case DOUBLE:
        return asDouble(a) - asDouble(b);
      case DECIMAL:
        return asDecimal(a).subtract(asDecimal(b), PYTHON_DECIMAL);
      default:
        break;
    }
    if (b instanceof Interval y && a instanceof Micros x) {
      return new Micros(Math.subtractExact(x.micros(), y.micros()));
    }
    if (b instanceof Interval y && a instanceof Day x) {
      return new Day(x.days() - Math.floorDiv(y.micros(), DAY)); // Python: date - td.days
    }
    if (a instanceof Interval x && b instanceof Interval y) {
      return new Interval(Math.subtractExact(x.micros(), y.micros()));
    }
    if (a instanceof Micros x && b instanceof Micros y) {
      return new Interval(Math.subtractExact(x.micros(), y.micros()));
    }
    if (a instanceof Day x && b instanceof Day y) return new Interval((x.days() - y.days()) * DAY);
    throw unsupported("-", a, b);
  }

  private static Object multiply(Object a, Object b) {
    switch (common(a, b)) {
      case LONG:
        return exact(() -> Math.multiplyExact(asLong(a), asLong(b)));
      case DOUBLE:
        return asDouble(a) * asDouble(b);
      case DECIMAL:
        return asDecimal(a).multiply(asDecimal(b), PYTHON_DECIMAL);
      default:
        break;
    }
    if (b instanceof Interval && numeric(a) >= 0) return multiply(b, a);
    if (a instanceof Interval x && numeric(b) == LONG) {
      return new Interval(Math.multiplyExact(x.micros(), asLong(b)));
    }
    if (a instanceof Interval x && numeric(b) == DOUBLE) {
      BigDecimal micros = new BigDecimal(x.micros()).multiply(new BigDecimal((Double) b));
      return new Interval(roundMicros(micros)); // Python: half-even to the microsecond
    }
    throw unsupported("*", a, b);
  }

  private static Object divide(Object a, Object b) {
    if (isZero(b)) return null;
    switch (common(a, b)) {
      case LONG:
        if (a instanceof Boolean) return asDouble(a) / asDouble(b); // Python: True / 2 == 0.5
        return exact(() -> asLong(a) / asLong(b)); // truncates toward zero, as in Flink
      case DOUBLE:
        return asDouble(a) / asDouble(b);
      case DECIMAL:
        return asDecimal(a).divide(asDecimal(b), PYTHON_DECIMAL);
      default:
        break;
    }
    if (a instanceof Interval x && numeric(b) == LONG) {
      BigDecimal micros = new BigDecimal(x.micros());
      return new Interval(
          roundMicros(micros.divide(BigDecimal.valueOf(asLong(b)), MathContext.DECIMAL128)));
    }
    if (a instanceof Interval x && b instanceof Interval y) {
      return (double) x.micros() / y.micros();
    }
    throw unsupported("/", a, b);
  }

  private static Object mod(Object a, Object b) {
    if (isZero(b)) return null;
    switch (common(a, b)) {
      case LONG: {
        long x = asLong(a);
        long m = Math.abs(x) % Math.abs(asLong(b)); // the dividend's sign, as in SQL
        return x >= 0 ? m : -m;
      }
      case DOUBLE: {
        double x = asDouble(a);
        double m = Math.abs(x) % Math.abs(asDouble(b));
        return x >= 0 ? m : -m;
      }
      case DECIMAL: {
        BigDecimal x = asDecimal(a);
        BigDecimal m = x.abs().remainder(asDecimal(b).abs(), PYTHON_DECIMAL);
        return x.signum() >= 0 ? m : m.negate();
      }
      default:
        throw unsupported("mod", a, b);
    }
  }

  private static Object negate(Object a) {
    return switch (numeric(a)) {
      case LONG -> exact(() -> Math.negateExact(asLong(a)));
      case DOUBLE -> -(Double) a;
      case DECIMAL -> ((BigDecimal) a).negate();
      default -> {
        if (a instanceof Interval x) yield new Interval(Math.negateExact(x.micros()));
        throw new IllegalArgumentException("cannot negate " + typeName(a));
      }
    };
  }

  private static Object abs(Object a) {
    return switch (numeric(a)) {
      case LONG -> exact(() -> Math.absExact(asLong(a)));
      case DOUBLE -> Math.abs((Double) a);
      case DECIMAL -> ((BigDecimal) a).abs();
      default -> {
        if (a instanceof Interval x) yield new Interval(Math.absExact(x.micros()));
        throw new IllegalArgumentException("cannot take abs of " + typeName(a));
      }
    };
  }

  /** Python's truth value (for NOT). */
  private static boolean truthy(Object a) {
    if (a instanceof Boolean b) return b;
    if (a instanceof Long l) return l != 0;
    if (a instanceof Double d) return d != 0.0;
    if (a instanceof BigDecimal d) return d.signum() != 0;
    if (a instanceof String s) return !s.isEmpty();
    if (a instanceof byte[] b) return b.length != 0;
    if (a instanceof Interval i) return i.micros() != 0;
    return true;
  }

  private static boolean isZero(Object b) {
    return switch (numeric(b)) {
      case LONG -> asLong(b) == 0;
      case DOUBLE -> (Double) b == 0.0;
      case DECIMAL -> ((BigDecimal) b).signum() == 0;
      default -> false;
    };
  }

  private static long roundMicros(BigDecimal micros) {
    return micros.setScale(0, RoundingMode.HALF_EVEN).longValueExact();
  }

  private interface LongOp {
    long get();
  }

  private static Object exact(LongOp op) {
    try {
      return op.get();
    } catch (ArithmeticException e) {
      throw new ArithmeticException(
          "integer overflow in a join condition (BIGINT range): cast the operands to DECIMAL");
    }
  }

  private static String string(Object a, String fn) {
    if (a instanceof String s) return s;
    throw new IllegalArgumentException(fn + " needs a string, got " + typeName(a));
  }

  private static IllegalArgumentException unsupported(String op, Object a, Object b) {
    return new IllegalArgumentException(
        "unsupported operand types for " + op + ": " + typeName(a) + " and " + typeName(b));
  }

  private static String typeName(Object a) {
    return a == null ? "NULL" : a.getClass().getSimpleName();
  }
}

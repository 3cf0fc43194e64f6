package tableapi.serverext;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retractions (-U/-D) of a row an operator holds no state for: dropped, as Flink drops them,
 * but never silently. Each is counted per operator in this JVM (the plugin's {@code
 * unseen_retractions} relation reads the counts of the driver's JVM: all of them on a local
 * master), and the server's log warns at the 1st, 10th, 100th, ... of each operator, naming
 * the row. Their usual causes: the changelog's inserts were applied after their retractions
 * (files out of order), the input holds retractions of rows it never inserted, or the state
 * TTL expired the row.
 */
final class UnseenRetractions {
  private static final Logger LOG = LoggerFactory.getLogger(UnseenRetractions.class);
  private static final Map<String, AtomicLong> COUNTS = new ConcurrentHashMap<>();

  private UnseenRetractions() {}

  /**
   * One more retraction that {@code operator} drops, of {@code what} (a row's fields or a
   * key, formatted only when the warning is logged).
   */
  static void dropped(String operator, Object what) {
    long n = COUNTS.computeIfAbsent(operator, k -> new AtomicLong()).incrementAndGet();
    if (isPowerOfTen(n)) {
      LOG.warn("{}: a retraction of a row it holds no state for was dropped ({} in this JVM so"
          + " far), e.g. {}: the input retracts a row it never inserted, its inserts came"
          + " after their retractions, or the state TTL expired the row",
          operator, n, what instanceof Object[] fields ? Arrays.toString(fields) : what);
    }
  }

  private static boolean isPowerOfTen(long n) {
    while (n >= 10 && n % 10 == 0) n /= 10;
    return n == 1;
  }

  /** The counts so far, by operator. */
  static Map<String, Long> counts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    COUNTS.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }
}

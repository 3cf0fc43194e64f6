package tableapi.serverext;

import java.util.Iterator;
import java.util.Map;

/**
 * One input's state view (Flink's JoinRecordStateView / OuterJoinRecordStateView) as functions
 * over its map, in state (insertion) order, which is the order matches are visited in:
 *
 * <ul>
 *   <li>JoinKeyContainsUniqueKey: one entry under a constant key, at most one row per join key;
 *   <li>HasUniqueKey: unique key -> entry; an accumulate with a present unique key replaces the
 *       row in place (a retract removes by unique key);
 *   <li>NoUniqueKey: row -> entry; {@code count} is the number of copies of the row.
 * </ul>
 *
 * <p>{@code assoc} is Flink's numOfAssociations, kept on outer sides (and the left side of
 * semi/anti joins): how many rows of the other side (copies counted) match this row; -1 on
 * inner sides. {@code written} is the processing time of the entry's last write: with a state
 * TTL the entry is gone once {@code written + ttl <= now} (Flink's OnCreateAndWrite,
 * NeverReturnExpired), dropped when its key is next loaded.
 *
 * <p>The same as {@code SideView} in {@code tests/models/regular.py}, line for line.
 */
final class SideView {
  private static final Object UNIT = new Object() {}; // the one key of JoinKeyContainsUniqueKey

  /** One stored row. */
  static final class Entry {
    final Object[] row;
    int count;
    int assoc;
    long written;

    Entry(Object[] row, int count, int assoc, long written) {
      this.row = row;
      this.count = count;
      this.assoc = assoc;
      this.written = written;
    }
  }

  final boolean outer;
  final long ttl; // -1: none
  final int width;
  private final JoinSpec.Layout layout;
  private final int[] uniqueKey;

  SideView(JoinSpec.Side side, boolean outer) {
    this.outer = outer;
    this.ttl = side.ttlMs();
    this.width = side.width();
    this.layout = side.layout();
    this.uniqueKey = side.uniqueKey();
  }

  Object keyOf(Object[] row) {
    return switch (layout) {
      case JOIN_KEY_CONTAINS_UNIQUE_KEY -> UNIT;
      case NO_UNIQUE_KEY -> new Values.Tuple(row);
      case HAS_UNIQUE_KEY -> {
        Object[] key = new Object[uniqueKey.length];
        for (int i = 0; i < key.length; i++) key[i] = row[uniqueKey[i]];
        yield new Values.Tuple(key);
      }
    };
  }

  /** Flink's {@code addRecord(record, numOfAssociations)}. */
  void add(Map<Object, Entry> rows, Object[] row, int assoc, long now) {
    Object key = keyOf(row);
    if (layout == JoinSpec.Layout.NO_UNIQUE_KEY) {
      Entry e = rows.get(key);
      if (e != null) {
        e.count += 1;
        e.assoc = assoc;
        e.written = now;
        return;
      }
    }
    rows.put(key, new Entry(row, 1, assoc, now)); // a present key keeps its place
  }

  /**
   * Flink's {@code retractRecord}: by unique key, or one copy of the row; absent is a no-op
   * (counted: {@link UnseenRetractions}).
   */
  void retract(Map<Object, Entry> rows, Object[] row, long now) {
    Object key = keyOf(row);
    Entry e = rows.get(key);
    if (e == null) {
      UnseenRetractions.dropped("join", row);
      return;
    }
    if (e.count > 1) {
      e.count -= 1;
      e.written = now;
    } else {
      rows.remove(key);
    }
  }

  /**
   * Flink's {@code isAdditionalMatch}: does accumulating {@code row} add matches for the other
   * side, or replace a stored row (same unique key) whose matches are already counted?
   */
  boolean addsMatch(Map<Object, Entry> rows, Object[] row) {
    return switch (layout) {
      case JOIN_KEY_CONTAINS_UNIQUE_KEY -> false;
      case NO_UNIQUE_KEY -> true;
      case HAS_UNIQUE_KEY -> !rows.containsKey(keyOf(row));
    };
  }

  /** Drops the entries whose TTL has passed; true when some were dropped. */
  boolean prune(Map<Object, Entry> rows, long now) {
    if (ttl < 0 || rows.isEmpty()) return false;
    boolean dropped = false;
    for (Iterator<Entry> it = rows.values().iterator(); it.hasNext(); ) {
      if (it.next().written + ttl <= now) {
        it.remove();
        dropped = true;
      }
    }
    return dropped;
  }

  /** The latest time an entry of this side expires (-1: none do). */
  long lastExpiry(Map<Object, Entry> rows) {
    long last = -1;
    if (ttl >= 0) for (Entry e : rows.values()) last = Math.max(last, e.written + ttl);
    return last;
  }
}

package tableapi.serverext;

import java.util.List;

/**
 * Python's {@code bisect_left} / {@code bisect_right} over a list sorted by time: the interval
 * join's caches and the temporal join's versions and held probe rows, searched the way the
 * Python processors search theirs.
 */
final class Bisect {
  private Bisect() {}

  /** An element of a time-sorted list. */
  interface Timed {
    long time();
  }

  /** The first element with {@code time >= t} (bisect_left). */
  static int left(List<? extends Timed> sorted, long t) {
    return search(sorted, t, false);
  }

  /** The first element with {@code time > t} (bisect_right). */
  static int right(List<? extends Timed> sorted, long t) {
    return search(sorted, t, true);
  }

  private static int search(List<? extends Timed> sorted, long t, boolean pastEqual) {
    int lo = 0;
    int hi = sorted.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      long time = sorted.get(mid).time();
      if (time < t || (pastEqual && time == t)) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
}

package tableapi.serverext;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.spark.sql.streaming.GroupState;

/**
 * A key's timers (Flink's InternalTimerService, per key): any number of event-time and
 * processing-time timers, kept in the key's state value beside the operator's own value, so
 * that they are checkpointed with the state and survive a restart. A {@code
 * flatMapGroupsWithState} key has one timeout; this service sets it to the key's earliest
 * timer of the operator's timeout domain, and fires the timers the watermark or the clock has
 * passed whenever the key is called (by its rows or by that timeout).
 *
 * <p>A timer is (domain, time, tag): the tag tells the operator what the timer is for (a
 * window's end, a row's id); registering a timer that is there is a no-op, as in Flink.
 * {@link #pollDue} fires an event-time timer at {@code t} once the watermark is at or past
 * {@code t} (Flink's rule; Spark's event-time timeout is set to {@code t - 1} for it), a
 * processing-time timer once the clock is, the event-time timers first, each domain in time
 * order (ties by tag); a timer registered while firing fires in the same call when it is due.
 * Timers of the other domain than the operator's timeout wake no key: they fire at the key's
 * next call (Spark gives a query one timeout domain, as transformWithState one time mode).
 *
 * <p>Use, per call: {@code t = TimerService.load(state)}, {@code while ((x = t.pollDue(wm,
 * now)) != null) ...}, the operator's work ({@link #register}, {@link #delete}, {@link
 * #value(byte[])}), {@code t.save(state, domain)}.
 *
 * <p>State value: {@code byte FORMAT; per domain (event, processing) varint n, n x (zigzag
 * time delta from the previous timer's, zigzag tag); byte 0, or 1 and the operator's value
 * (varint length, bytes)}.
 * Measured against transformWithState's timers in {@code README.md} ("Timers").
 */
final class TimerService {
  private static final byte FORMAT = 1;

  /** A timer's clock. */
  enum Domain {
    EVENT_TIME,
    PROCESSING_TIME
  }

  /** A timer: its clock, time in epoch ms and tag. */
  record Timer(Domain domain, long time, long tag) implements Comparable<Timer> {
    @Override
    public int compareTo(Timer o) {
      int c = Long.compare(time, o.time);
      return c != 0 ? c : Long.compare(tag, o.tag);
    }
  }

  private final TreeSet<Timer> event = new TreeSet<>();
  private final TreeSet<Timer> processing = new TreeSet<>();
  private byte[] value; // the operator's own state value (null: none)

  /** A key's timers and value from its state (none when the key has no state). */
  static TimerService load(GroupState<byte[]> state) {
    return state.exists() ? decode(state.get()) : new TimerService();
  }

  /** The operator's own state value of the key (null: none). */
  byte[] value() {
    return value;
  }

  /** Sets the operator's own state value of the key (null: none). */
  void value(byte[] newValue) {
    value = newValue;
  }

  private TreeSet<Timer> timers(Domain domain) {
    return domain == Domain.EVENT_TIME ? event : processing;
  }

  /** Registers a timer; false when it was there already. */
  boolean register(Domain domain, long time, long tag) {
    return timers(domain).add(new Timer(domain, time, tag));
  }

  /** Deletes a timer; false when there was none. */
  boolean delete(Domain domain, long time, long tag) {
    return timers(domain).remove(new Timer(domain, time, tag));
  }

  /** The key's timers of {@code domain}, in firing order. */
  List<Timer> list(Domain domain) {
    return new ArrayList<>(timers(domain));
  }

  /** How many timers the key has. */
  int size() {
    return event.size() + processing.size();
  }

  /**
   * The next timer due, removed: an event-time timer at or before {@code watermark} (-1: the
   * query has none, no event-time timer is due), else a processing-time timer at or before
   * {@code now}; null when none is due.
   */
  Timer pollDue(long watermark, long now) {
    if (!event.isEmpty() && watermark >= 0 && event.first().time() <= watermark) {
      return event.pollFirst();
    }
    if (!processing.isEmpty() && processing.first().time() <= now) return processing.pollFirst();
    return null;
  }

  /**
   * Writes the key's timers and value to its state (removes the state when it has neither)
   * and sets the key's timeout to its earliest timer of {@code wakeBy} (the operator's timeout
   * domain; null: none): event time {@code t - 1} (Spark fires once the watermark is past the
   * timeout), processing time the duration to {@code t - 1}; at least what Spark accepts (a
   * positive time not behind the watermark, a positive duration), so a timer Spark cannot
   * place exactly fires that much later.
   */
  void save(GroupState<byte[]> state, Domain wakeBy) {
    if (value == null && event.isEmpty() && processing.isEmpty()) {
      if (state.exists()) state.remove();
      return;
    }
    state.update(encode());
    if (wakeBy == Domain.EVENT_TIME && !event.isEmpty()) {
      long watermark = state.getCurrentWatermarkMs();
      state.setTimeoutTimestamp(Math.max(Math.max(event.first().time() - 1, watermark), 1));
    } else if (wakeBy == Domain.PROCESSING_TIME && !processing.isEmpty()) {
      long left = processing.first().time() - 1 - state.getCurrentProcessingTimeMs();
      state.setTimeoutDuration(Math.max(left, 1));
    }
  }

  byte[] encode() {
    RowCodec.Out out = new RowCodec.Out(16 + 4 * size() + (value == null ? 0 : value.length));
    out.raw(FORMAT, 1);
    write(out, event);
    write(out, processing);
    out.raw(value == null ? 0 : 1, 1);
    if (value != null) out.bytes(value);
    return out.bytes();
  }

  static TimerService decode(byte[] bytes) {
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown timer state format");
    TimerService t = new TimerService();
    read(in, t.event, Domain.EVENT_TIME);
    read(in, t.processing, Domain.PROCESSING_TIME);
    if (in.raw(1) == 1) t.value = in.bytes();
    return t;
  }

  private static void write(RowCodec.Out out, TreeSet<Timer> timers) {
    out.varint(timers.size());
    long previous = 0;
    for (Timer t : timers) { // in time order: small deltas
      out.zigzag(t.time() - previous);
      out.zigzag(t.tag());
      previous = t.time();
    }
  }

  private static void read(RowCodec.In in, TreeSet<Timer> timers, Domain domain) {
    long time = 0;
    for (long i = 0, n = in.varint(); i < n; i++) {
      time += in.zigzag();
      timers.add(new Timer(domain, time, in.zigzag()));
    }
  }
}

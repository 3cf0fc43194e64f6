package tableapi.serverext;

import java.util.NoSuchElementException;
import org.apache.spark.sql.streaming.GroupState;
import scala.Option;

/**
 * An in-memory {@link GroupState}, as Spark's GroupStateImpl behaves for one call: the timeout
 * starts unset on every call (the function must set it again); only a processing-time timeout
 * conf may set a duration, only an event-time one a timestamp (positive, not behind the
 * watermark).
 */
final class MemoryGroupState implements GroupState<byte[]> {
  private byte[] value;
  private final boolean timedOut;
  private final long now;
  private final boolean processingTimeout;
  private final boolean eventTimeout;
  private final long watermark; // -1: the query has none
  long timeoutAt = -1;

  MemoryGroupState(byte[] value, boolean timedOut, long now, boolean processingTimeout) {
    this(value, timedOut, now, processingTimeout, false, -1);
  }

  MemoryGroupState(byte[] value, boolean timedOut, long now, boolean processingTimeout,
      boolean eventTimeout, long watermark) {
    this.value = value;
    this.timedOut = timedOut;
    this.now = now;
    this.processingTimeout = processingTimeout;
    this.eventTimeout = eventTimeout;
    this.watermark = watermark;
  }

  byte[] value() {
    return value;
  }

  @Override
  public boolean exists() {
    return value != null;
  }

  @Override
  public byte[] get() {
    if (value == null) throw new NoSuchElementException("no state (never set, or removed)");
    return value;
  }

  @Override
  public Option<byte[]> getOption() {
    return Option.apply(value);
  }

  @Override
  public void update(byte[] newValue) {
    if (newValue == null) throw new IllegalArgumentException("'null' is not a valid state value");
    value = newValue;
  }

  @Override
  public void remove() {
    value = null;
  }

  @Override
  public boolean hasTimedOut() {
    return timedOut;
  }

  @Override
  public void setTimeoutDuration(long durationMs) {
    if (!processingTimeout) {
      throw new UnsupportedOperationException("set a timeout only with ProcessingTimeTimeout");
    }
    if (durationMs <= 0) throw new IllegalArgumentException("Timeout duration must be positive");
    timeoutAt = now + durationMs;
  }

  @Override
  public void setTimeoutDuration(String duration) {
    throw new UnsupportedOperationException("not used by the join operators");
  }

  @Override
  public void setTimeoutTimestamp(long timestampMs) {
    if (!eventTimeout) {
      throw new UnsupportedOperationException("set a timestamp only with EventTimeTimeout");
    }
    if (timestampMs <= 0) throw new IllegalArgumentException("Timeout timestamp must be positive");
    if (watermark >= 0 && timestampMs < watermark) {
      throw new IllegalArgumentException(
          "Timeout timestamp (" + timestampMs + ") cannot be earlier than the current watermark ("
              + watermark + ")");
    }
    timeoutAt = timestampMs;
  }

  @Override
  public void setTimeoutTimestamp(long timestampMs, String additionalDuration) {
    throw new UnsupportedOperationException("event-time timeouts are not used");
  }

  @Override
  public void setTimeoutTimestamp(java.sql.Date timestamp) {
    throw new UnsupportedOperationException("event-time timeouts are not used");
  }

  @Override
  public void setTimeoutTimestamp(java.sql.Date timestamp, String additionalDuration) {
    throw new UnsupportedOperationException("event-time timeouts are not used");
  }

  @Override
  public long getCurrentWatermarkMs() {
    if (watermark < 0) throw new UnsupportedOperationException("no watermark");
    return watermark;
  }

  @Override
  public long getCurrentProcessingTimeMs() {
    return now;
  }
}

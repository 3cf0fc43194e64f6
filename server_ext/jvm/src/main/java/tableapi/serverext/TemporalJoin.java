package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.GroupState;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.types.StructType;

/**
 * Flink's temporal joins ({@code FOR SYSTEM_TIME AS OF}), INNER / LEFT, the JVM twin of
 * {@code tests/models/temporal.py} (its docstring has the semantics, line for line).
 *
 * <p>Event time ({@code TemporalRowTimeJoinOperator}): one binary value per key, the versions
 * {@code [(time, row | deleted)]} sorted by time and the held probe rows {@code [(time, row)]};
 * a probe row behind the watermark is emitted once as {@link #LATE}. The key's one timer (at its
 * smallest held probe time) is the group's event-time timeout, set to that time - 1 because a
 * flatMapGroupsWithState timeout fires once the watermark is past it (a TWS timer at it).
 *
 * <p>Processing time ({@code TemporalProcessTimeJoinOperator}): the value is the key's latest
 * build row; a probe row joins it at once. No timeout.
 */
final class TemporalJoin implements FlatMapGroupsWithStateFunction<Row, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;
  static final byte LATE = 9; // temporal_spec.LATE: counted and dropped by the client
  private static final byte FORMAT = 1;

  private final JoinSpec spec;
  private final boolean event;
  private final boolean outer;
  private final InputUnion union;
  private final int timeAt;

  private transient TwoSides sides; // built on first use in each executor

  TemporalJoin(JoinSpec spec, boolean event, StructType input) {
    this.spec = spec;
    this.event = event;
    this.outer = spec.kind.equals("left");
    this.union = InputUnion.twoInputs(input);
    this.timeAt = input.fieldIndex(Wire.TIME);
  }

  /**
   * The {@code temporal} section ({@code TemporalSpec.wire_section()}): the two inputs and
   * {@code time}, {@code event} or {@code processing}.
   */
  record Spec(Specs.TwoInput join, String time) {
    Spec {
      if (!time.equals("event") && !time.equals("processing")) {
        throw new IllegalArgumentException(
            "temporal.time must be event or processing, got " + time);
      }
    }

    static Spec parse(Specs.Envelope envelope) {
      JsonNode s = envelope.section("temporal");
      return new Spec(Specs.TwoInput.parse(s, "temporal", false),
          Specs.text(s, "time", "temporal"));
    }

    boolean event() {
      return time.equals("event");
    }
  }

  /** The {@code temporal} operator ({@link OperatorPlugin#OPERATORS}). */
  static Operator create(Operator.Request request) {
    Spec temporal = Spec.parse(request.spec());
    JoinSpec spec = request.twoInput(temporal.join(), "temporal", true);
    boolean event = temporal.event();
    if (!spec.kind.equals("inner") && !spec.kind.equals("left")) {
      throw new IllegalArgumentException("a temporal join is inner or left, got " + spec.kind);
    }
    return new Operator(new TemporalJoin(spec, event, request.input()), spec.output,
        event ? GroupStateTimeout.EventTimeTimeout() : GroupStateTimeout.NoTimeout());
  }

  private void init() {
    if (sides == null) sides = new TwoSides(spec);
  }

  /** A version: the build row from {@code time} on, or null (deleted from then on). */
  private record Version(long time, Object[] row) implements Bisect.Timed {}

  /** A probe row waiting for the watermark. */
  private record Probe(long time, Object[] row) implements Bisect.Timed {}

  @Override
  public Iterator<Row> call(Row key, Iterator<Row> rows, GroupState<byte[]> state) {
    init();
    List<Row> out = new ArrayList<>();
    if (!event) {
      processing(union.ordered(rows), Rows.neverMatches(key, spec.nullSafe), state, out);
      return out.iterator();
    }
    long watermark = state.getCurrentWatermarkMs();
    if (watermark < 0) {
      throw new IllegalStateException(
          "an event-time temporal join needs a watermark: the inputs need withWatermark on"
              + " their rowtime");
    }
    List<Version> versions = new ArrayList<>();
    List<Probe> probes = new ArrayList<>();
    boolean stored = state.exists();
    if (stored) decode(state.get(), versions, probes);
    boolean changed = false;
    if (!state.hasTimedOut()) {
      boolean nullKey = Rows.neverMatches(key, spec.nullSafe);
      for (Row row : union.ordered(rows)) {
        if (row.isNullAt(timeAt)) {
          throw new IllegalArgumentException(
              "temporal join: a row without a time (__t is null); event-time temporal joins"
                  + " need the time attribute of both inputs to be NOT NULL");
        }
        long t = row.getLong(timeAt);
        byte kind = union.kind(row);
        if (!union.isLeft(row)) {
          if (nullKey) continue; // a null key never matches: nothing to keep
          Object[] value = Rows.retracts(kind) ? null : union.fields(row, sides.right.width);
          int i = Bisect.left(versions, t);
          if (i < versions.size() && versions.get(i).time == t) {
            versions.set(i, new Version(t, value));
          } else {
            versions.add(i, new Version(t, value));
          }
          changed = true;
          continue;
        }
        if (Rows.retracts(kind)) throw probeRetracts(kind);
        Object[] lrow = union.fields(row, sides.left.width);
        if (t < watermark) {
          out.add(sides.output(LATE, lrow, null));
          continue;
        }
        if (nullKey && !outer) continue; // inner: never matches, nothing to emit
        probes.add(Bisect.right(probes, t), new Probe(t, lrow));
        changed = true;
      }
    }
    changed |= emitDue(versions, probes, watermark, out);
    changed |= prune(versions, watermark);
    if (versions.isEmpty() && probes.isEmpty()) {
      if (stored) state.remove();
    } else {
      if (changed) state.update(encode(versions, probes));
      // Spark takes positive timestamps only: at epoch 0 the timer fires 1 ms late.
      if (!probes.isEmpty()) state.setTimeoutTimestamp(Math.max(1, probes.get(0).time - 1));
    }
    return out.iterator();
  }

  private static IllegalArgumentException probeRetracts(byte kind) {
    return new IllegalArgumentException(
        "temporal join: the probe (left) input must be insert-only, but a "
            + (kind == Wire.UPDATE_BEFORE ? "-U" : "-D")
            + " row arrived; a temporal join cannot retract results it has emitted (plan a"
            + " regular join instead)");
  }

  /** Joins every held probe row with {@code time <= watermark} and removes it. */
  private boolean emitDue(
      List<Version> versions, List<Probe> probes, long watermark, List<Row> out) {
    int n = Bisect.right(probes, watermark);
    if (n == 0) return false;
    for (Probe p : probes.subList(0, n)) {
      int i = Bisect.right(versions, p.time) - 1;
      join(p.row, i >= 0 ? versions.get(i).row : null, out);
    }
    probes.subList(0, n).clear();
    return true;
  }

  /** A probe row with the build row in effect for it (null: none): joined, or padded (LEFT). */
  private void join(Object[] probe, Object[] build, List<Row> out) {
    if (build != null && sides.matches(probe, build)) {
      out.add(sides.output(Wire.INSERT, probe, build));
    } else if (outer) {
      out.add(sides.output(Wire.INSERT, probe, null));
    }
  }

  /** Drops the versions older than the latest one with {@code time <= watermark}. */
  private static boolean prune(List<Version> versions, long watermark) {
    int keep = Bisect.right(versions, watermark) - 1;
    if (keep <= 0) return false;
    versions.subList(0, keep).clear();
    return true;
  }

  private void processing(List<Row> ordered, boolean nullKey, GroupState<byte[]> state,
      List<Row> out) {
    Object[] current = null;
    boolean loaded = false;
    boolean wrote = false;
    for (Row row : ordered) {
      byte kind = union.kind(row);
      if (!union.isLeft(row)) {
        if (nullKey) continue;
        current = Rows.retracts(kind) ? null : union.fields(row, sides.right.width);
        loaded = wrote = true;
        continue;
      }
      if (Rows.retracts(kind)) throw probeRetracts(kind);
      Object[] lrow = union.fields(row, sides.left.width);
      Object[] rrow = null;
      if (!nullKey) {
        if (!loaded) {
          current = state.exists() ? sides.right.read(new RowCodec.In(state.get())) : null;
          loaded = true;
        }
        rrow = current;
      }
      join(lrow, rrow, out);
    }
    if (wrote) {
      if (current == null) {
        if (state.exists()) state.remove();
      } else {
        RowCodec.Out o = new RowCodec.Out(64);
        sides.right.write(o, current);
        state.update(o.bytes());
      }
    }
  }

  // -- the state value ---------------------------------------------------------------------------
  //   byte FORMAT; varint n; n x (zigzag time, byte present, [row]); varint m; m x (zigzag, row)

  private byte[] encode(List<Version> versions, List<Probe> probes) {
    RowCodec.Out out = new RowCodec.Out(64 + 32 * (versions.size() + probes.size()));
    out.raw(FORMAT, 1);
    out.varint(versions.size());
    for (Version v : versions) {
      out.zigzag(v.time);
      out.raw(v.row == null ? 0 : 1, 1);
      if (v.row != null) sides.right.write(out, v.row);
    }
    out.varint(probes.size());
    for (Probe p : probes) {
      out.zigzag(p.time);
      sides.left.write(out, p.row);
    }
    return out.bytes();
  }

  private void decode(byte[] bytes, List<Version> versions, List<Probe> probes) {
    RowCodec.In in = new RowCodec.In(bytes);
    if (in.raw(1) != FORMAT) throw new IllegalStateException("unknown temporal state format");
    for (long i = 0, n = in.varint(); i < n; i++) {
      long t = in.zigzag();
      versions.add(new Version(t, in.raw(1) == 0 ? null : sides.right.read(in)));
    }
    for (long i = 0, n = in.varint(); i < n; i++) {
      long t = in.zigzag();
      probes.add(new Probe(t, sides.left.read(in)));
    }
  }
}

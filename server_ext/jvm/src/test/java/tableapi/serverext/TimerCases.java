package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;

/**
 * The {@link TimerService} under flatMapGroupsWithState's calls, in memory ({@link
 * MemoryGroupState}, as {@link Harness} runs the operators): a case is
 *
 * <pre>
 *   {"timers": true, "wake_by": "event" | "processing", "rearm_ms": n (optional),
 *    "batches": [{"now": ms, "watermark": ms, "restart": bool,
 *                 "ops": [[key, "register" | "delete", "event" | "processing", time, tag], ..]}]}
 * </pre>
 *
 * Per batch, as Spark runs it: one call per key with ops (which first fires the key's due
 * timers, then applies its ops), then one call per other key whose timeout passed. With
 * {@code rearm_ms}, a fired event-time timer of tag 1 registers the next one that much later
 * (a timer registered while firing). {@code restart}: the state and timeouts go through their
 * bytes and a new function serialized from the old one runs on (a restart from the
 * checkpoint). Out: {@code {"batches": [[[key, domain, time, tag], ..], ..], "pending": {key:
 * [[domain, time, tag], ..]}, "state_keys": n}}.
 */
final class TimerCases {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private TimerCases() {}

  /** One op of a key: register or delete a timer. */
  record Op(boolean register, TimerService.Domain domain, long time, long tag) {}

  /** The function under test: fires due timers, then applies the key's ops. */
  static final class Probe implements FlatMapGroupsWithStateFunction<Long, Op, byte[], Object[]> {
    private static final long serialVersionUID = 1L;
    private final TimerService.Domain wakeBy;
    private final long rearmMs;

    Probe(TimerService.Domain wakeBy, long rearmMs) {
      this.wakeBy = wakeBy;
      this.rearmMs = rearmMs;
    }

    @Override
    public Iterator<Object[]> call(Long key, Iterator<Op> ops, org.apache.spark.sql.streaming
        .GroupState<byte[]> state) {
      TimerService timers = TimerService.load(state);
      long watermark = wakeBy == TimerService.Domain.EVENT_TIME
          ? state.getCurrentWatermarkMs() : -1;
      List<Object[]> fired = new ArrayList<>();
      for (TimerService.Timer t = timers.pollDue(watermark, state.getCurrentProcessingTimeMs());
          t != null; t = timers.pollDue(watermark, state.getCurrentProcessingTimeMs())) {
        fired.add(new Object[] {key, t});
        if (rearmMs > 0 && t.domain() == TimerService.Domain.EVENT_TIME && t.tag() == 1) {
          timers.register(t.domain(), t.time() + rearmMs, 1);
        }
      }
      while (ops.hasNext()) {
        Op op = ops.next();
        if (op.register) {
          timers.register(op.domain, op.time, op.tag);
        } else {
          timers.delete(op.domain, op.time, op.tag);
        }
      }
      timers.save(state, wakeBy);
      return fired.iterator();
    }
  }

  static ObjectNode run(JsonNode c) {
    TimerService.Domain wakeBy = domain(c.get("wake_by").asText());
    Probe fn = new Probe(wakeBy, c.path("rearm_ms").asLong(0));
    boolean event = wakeBy == TimerService.Domain.EVENT_TIME;
    Map<Long, byte[]> states = new LinkedHashMap<>();
    Map<Long, Long> timeoutAt = new LinkedHashMap<>();
    ArrayNode batches = NODES.arrayNode();
    for (JsonNode batch : c.get("batches")) {
      long now = batch.get("now").asLong();
      long watermark = batch.path("watermark").asLong(-1);
      if (batch.path("restart").asBoolean(false)) {
        fn = roundTrip(fn);
        Map<Long, byte[]> restored = new LinkedHashMap<>();
        states.forEach((k, v) -> restored.put(k, v.clone()));
        states = restored;
      }
      Map<Long, List<Op>> groups = new LinkedHashMap<>();
      for (JsonNode o : batch.path("ops")) {
        groups.computeIfAbsent(o.get(0).asLong(), k -> new ArrayList<>()).add(new Op(
            o.get(1).asText().equals("register"), domain(o.get(2).asText()), o.get(3).asLong(),
            o.get(4).asLong()));
      }
      ArrayNode fired = NODES.arrayNode();
      for (Map.Entry<Long, List<Op>> g : groups.entrySet()) {
        call(fn, g.getKey(), g.getValue(), false, now, watermark, event, states, timeoutAt,
            fired);
      }
      for (Long k : new ArrayList<>(timeoutAt.keySet())) {
        long at = timeoutAt.get(k);
        if (!groups.containsKey(k) && (event ? at < watermark : at < now)) {
          call(fn, k, List.of(), true, now, watermark, event, states, timeoutAt, fired);
        }
      }
      batches.add(fired);
    }
    ObjectNode pending = NODES.objectNode();
    states.forEach((k, v) -> {
      TimerService t = TimerService.decode(v);
      ArrayNode list = NODES.arrayNode();
      for (TimerService.Domain d : TimerService.Domain.values()) {
        for (TimerService.Timer x : t.list(d)) list.add(timer(x));
      }
      pending.set(Long.toString(k), list);
    });
    ObjectNode result = NODES.objectNode();
    result.set("batches", batches);
    result.set("pending", pending);
    result.put("state_keys", states.size());
    return result;
  }

  private static void call(Probe fn, long key, List<Op> ops, boolean timedOut, long now,
      long watermark, boolean event, Map<Long, byte[]> states, Map<Long, Long> timeoutAt,
      ArrayNode fired) {
    MemoryGroupState state =
        new MemoryGroupState(states.get(key), timedOut, now, !event, event, watermark);
    Iterator<Object[]> out = fn.call(key, ops.iterator(), state);
    if (state.value() == null) {
      states.remove(key);
    } else {
      states.put(key, state.value());
    }
    if (state.timeoutAt >= 0) {
      timeoutAt.put(key, state.timeoutAt);
    } else {
      timeoutAt.remove(key);
    }
    while (out.hasNext()) {
      Object[] f = out.next();
      ArrayNode row = timer((TimerService.Timer) f[1]);
      row.insert(0, (Long) f[0]);
      fired.add(row);
    }
  }

  private static ArrayNode timer(TimerService.Timer t) {
    ArrayNode a = NODES.arrayNode();
    a.add(t.domain() == TimerService.Domain.EVENT_TIME ? "event" : "processing");
    a.add(t.time());
    a.add(t.tag());
    return a;
  }

  private static TimerService.Domain domain(String name) {
    return switch (name) {
      case "event" -> TimerService.Domain.EVENT_TIME;
      case "processing" -> TimerService.Domain.PROCESSING_TIME;
      default -> throw new IllegalArgumentException("domain is event or processing: " + name);
    };
  }

  /** The function through Java serialization, as Spark ships it to a restarted task. */
  private static Probe roundTrip(Probe fn) {
    try {
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
        out.writeObject(fn);
      }
      try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(
          new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
        return (Probe) in.readObject();
      }
    } catch (java.io.IOException | ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }
}

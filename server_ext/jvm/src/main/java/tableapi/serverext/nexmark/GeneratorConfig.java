/*
 * Licensed to the Apache Software Foundation (ASF) under one
 * or more contributor license agreements.  See the NOTICE file
 * distributed with this work for additional information
 * regarding copyright ownership.  The ASF licenses this file
 * to you under the Apache License, Version 2.0 (the
 * "License"); you may not use this file except in compliance
 * with the License.  You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 *
 * Ported from Nexmark (https://github.com/nexmark/nexmark, Apache 2.0):
 * nexmark-flink/src/main/java/com/github/nexmark/flink/generator/GeneratorConfig.java, with the
 * options of NexmarkConfiguration.java and source/NexmarkSourceOptions.java. Changes: built from
 * the connector's string options (Flink's option names) and checked, each error naming the
 * option and the fix; one timeline (Nexmark's source at parallelism 1: firstEventId 1,
 * firstEventNumber 1, one event generator), so an event's values depend on its number only and
 * any split of the range gives the same events; the base time is the option 'base-time' (a
 * fixed default, 2024-01-01 00:00:00 UTC) where Nexmark takes the wall clock; no stop-at,
 * out-of-order groups or size estimates.
 */
package tableapi.serverext.nexmark;

import java.io.Serializable;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parameters controlling how {@link NexmarkGenerator} synthesizes events. */
public final class GeneratorConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * Ids start at these values to help ensure the queries find a match even on small synthesized
   * dataset sizes.
   */
  public static final long FIRST_AUCTION_ID = 1000L;

  public static final long FIRST_PERSON_ID = 1000L;
  public static final long FIRST_CATEGORY_ID = 10L;

  /** Nexmark's source starts both at 1 (NexmarkTableSourceFactory): event k has id k + 2. */
  public static final long FIRST_EVENT_ID = 1L;

  public static final long FIRST_EVENT_NUMBER = 1L;

  /** The default 'base-time', the dateTime of event number 0: 2024-01-01 00:00:00 UTC. */
  public static final long DEFAULT_BASE_TIME = 1704067200000L;

  /** Average number of auctions in flight, per generator (NexmarkConfiguration's default). */
  public static final int NUM_IN_FLIGHT_AUCTIONS = 100;

  /** Maximum number of people active for auctions or bids (NexmarkConfiguration's default). */
  public static final int NUM_ACTIVE_PEOPLE = 1000;

  /** The options this config reads (Flink's Nexmark names, plus 'base-time'). */
  public static final Set<String> OPTIONS =
      Set.of(
          "events.num",
          "first-event.rate",
          "next-event.rate",
          "rate.shape",
          "rate.period",
          "rate.limited",
          "person.proportion",
          "auction.proportion",
          "bid.proportion",
          "person.avg-size",
          "auction.avg-size",
          "bid.avg-size",
          "bid.hot-ratio.auctions",
          "bid.hot-ratio.bidders",
          "auction.hot-ratio.sellers",
          "keep-alive",
          "stop-at",
          "max-emit-speed",
          "base-time");

  public final int personProportion;
  public final int auctionProportion;
  public final int bidProportion;
  public final int totalProportion;
  public final int firstEventRate;
  public final int nextEventRate;
  public final String rateShape;
  public final int avgPersonByteSize;
  public final int avgAuctionByteSize;
  public final int avgBidByteSize;
  public final int hotAuctionRatio;
  public final int hotSellersRatio;
  public final int hotBiddersRatio;
  /** Number of events to generate; 0: unbounded (Nexmark's "as many as possible"). */
  public final long numEvents;
  /** When true, a streaming source emits events no faster than their timestamps. */
  public final boolean rateLimited;
  /** Time for event number 0 (ms since epoch). */
  public final long baseTime;
  /** Delay between events, in microseconds. */
  public final double interEventDelayUs;

  private GeneratorConfig(Map<String, String> options) {
    Set<String> unknown = new TreeSet<>(options.keySet());
    unknown.removeAll(OPTIONS);
    unknown.remove("connector");
    unknown.remove("kind");
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          "unknown Nexmark option(s) " + unknown + "; the options are " + new TreeSet<>(OPTIONS));
    }
    numEvents = longOption(options, "events.num", 0L, 0L);
    firstEventRate = intOption(options, "first-event.rate", 10000, 1);
    nextEventRate = intOption(options, "next-event.rate", 10000, 1);
    rateShape = options.getOrDefault("rate.shape", "SQUARE").toUpperCase(Locale.ROOT);
    if (!rateShape.equals("SQUARE") && !rateShape.equals("SINE")) {
      throw new IllegalArgumentException(
          "Nexmark option 'rate.shape' is '"
              + options.get("rate.shape")
              + "': write SQUARE or SINE");
    }
    personProportion = intOption(options, "person.proportion", 1, 0);
    auctionProportion = intOption(options, "auction.proportion", 3, 0);
    bidProportion = intOption(options, "bid.proportion", 46, 0);
    totalProportion = personProportion + auctionProportion + bidProportion;
    // Nexmark divides by each of them (ids of the last person and auction of an epoch).
    if (personProportion == 0 || auctionProportion == 0 || totalProportion <= 0) {
      throw new IllegalArgumentException(
          "Nexmark options 'person.proportion' and 'auction.proportion' must be at least 1: "
              + "bids and auctions refer to the last person and auction");
    }
    avgPersonByteSize = memoryOption(options, "person.avg-size", 200);
    avgAuctionByteSize = memoryOption(options, "auction.avg-size", 500);
    avgBidByteSize = memoryOption(options, "bid.avg-size", 100);
    hotAuctionRatio = intOption(options, "bid.hot-ratio.auctions", 2, 1);
    hotBiddersRatio = intOption(options, "bid.hot-ratio.bidders", 4, 1);
    hotSellersRatio = intOption(options, "auction.hot-ratio.sellers", 4, 1);
    rateLimited =
        Boolean.parseBoolean(options.getOrDefault("rate.limited", "false"))
            || !Boolean.parseBoolean(options.getOrDefault("max-emit-speed", "true"));
    baseTime = parseBaseTime(options.get("base-time"));
    interEventDelayUs = 1000000.0 / firstEventRate; // one event generator
  }

  /** A config from the connector's options (Flink's names); unknown or bad ones are refused. */
  public static GeneratorConfig of(Map<String, String> options) {
    return new GeneratorConfig(options);
  }

  /** The event number of the event at {@code index} (0-based) of the source's one timeline. */
  public static long eventNumber(long index) {
    return FIRST_EVENT_NUMBER + index;
  }

  /** The timestamp (ms since epoch) of the event with {@code eventNumber}. */
  public long timestampForEvent(long eventNumber) {
    return baseTime + (long) (eventNumber * interEventDelayUs) / 1000L;
  }

  /** Is this an unbounded source (events.num = 0)? */
  public boolean unbounded() {
    return numEvents == 0;
  }

  private static String raw(Map<String, String> options, String key) {
    String v = options.get(key);
    return v == null ? null : v.trim();
  }

  private static long longOption(Map<String, String> options, String key, long dflt, long min) {
    String v = raw(options, key);
    if (v == null) {
      return dflt;
    }
    long parsed;
    try {
      parsed = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "Nexmark option '" + key + "' is '" + v + "': write a whole number, e.g. '1000'");
    }
    if (parsed < min) {
      throw new IllegalArgumentException(
          "Nexmark option '" + key + "' is " + parsed + ": it must be at least " + min);
    }
    return parsed;
  }

  private static int intOption(Map<String, String> options, String key, int dflt, int min) {
    long v = longOption(options, key, dflt, min);
    if (v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "Nexmark option '" + key + "' is " + v + ": it must be at most " + Integer.MAX_VALUE);
    }
    return (int) v;
  }

  private static final Pattern MEMORY = Pattern.compile("(\\d+)\\s*([a-zA-Z]*)");

  /** Flink's MemorySize text: a number of bytes with an optional unit (b, kb, mb, gb, tb). */
  static int memoryOption(Map<String, String> options, String key, int dflt) {
    String v = raw(options, key);
    if (v == null) {
      return dflt;
    }
    Matcher m = MEMORY.matcher(v);
    long unit = -1;
    if (m.matches()) {
      switch (m.group(2).toLowerCase(Locale.ROOT)) {
        case "", "b", "bytes" -> unit = 1;
        case "k", "kb", "kibibytes" -> unit = 1L << 10;
        case "m", "mb", "mebibytes" -> unit = 1L << 20;
        case "g", "gb", "gibibytes" -> unit = 1L << 30;
        default -> unit = -1;
      }
    }
    if (unit < 0) {
      throw new IllegalArgumentException(
          "Nexmark option '" + key + "' is '" + v + "': write a size such as '200b' or '1kb'");
    }
    long bytes = Long.parseLong(m.group(1)) * unit;
    if (bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "Nexmark option '" + key + "' is '" + v + "': it must be under 2gb");
    }
    return (int) bytes;
  }

  private static final DateTimeFormatter BASE_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss[.SSS]");

  /** 'base-time': epoch milliseconds, or 'yyyy-MM-dd HH:mm:ss[.SSS]' in UTC. */
  static long parseBaseTime(String v) {
    if (v == null) {
      return DEFAULT_BASE_TIME;
    }
    String s = v.trim();
    try {
      if (s.matches("-?\\d+")) {
        return Long.parseLong(s);
      }
      return LocalDateTime.parse(s, BASE_TIME).toInstant(ZoneOffset.UTC).toEpochMilli();
    } catch (NumberFormatException | DateTimeParseException e) {
      throw new IllegalArgumentException(
          "Nexmark option 'base-time' is '"
              + v
              + "': write a UTC time 'yyyy-MM-dd HH:mm:ss[.SSS]' or epoch milliseconds");
    }
  }
}

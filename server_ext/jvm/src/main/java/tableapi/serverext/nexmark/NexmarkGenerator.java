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
 * nexmark-flink/src/main/java/com/github/nexmark/flink/generator/NexmarkGenerator.java.
 * Changes, for determinism: each event draws from a SplittableRandom seeded by its event id
 * (Nexmark's generator shares one unseeded SplittableRandom, so no two runs agree), so the
 * event at an index is a function of the index and the options only, and a range can be split
 * anywhere (a Spark partition, a micro-batch) with the same events; event time comes from the
 * event number on one timeline starting at the option 'base-time' (Nexmark: the wall clock at
 * start, and a timeline per parallel source split); no wall-clock emission times or watermarks
 * (the query declares its own watermark), no out-of-order groups.
 */
package tableapi.serverext.nexmark;

import java.util.SplittableRandom;
import tableapi.serverext.nexmark.model.AuctionGenerator;
import tableapi.serverext.nexmark.model.BidGenerator;
import tableapi.serverext.nexmark.model.PersonGenerator;

/**
 * A generator for synthetic events. We try to make the data vaguely reasonable. We also ensure
 * most primary key/foreign key relations are correct. Eg: a Bid event will usually have valid
 * auction and bidder ids which can be joined to already-generated Auction and Person events.
 *
 * <p>Events are numbered by their index from 0: index i is Nexmark's event number i + 1 and
 * event id i + 2 (its source's firstEventNumber and firstEventId are both 1), so the first event
 * is an auction and every 50th (event id a multiple of 50, by default) a person.
 */
public final class NexmarkGenerator {
  private NexmarkGenerator() {}

  /** The kinds of events, Nexmark's event_type values. */
  public static final int PERSON = 0;

  public static final int AUCTION = 1;
  public static final int BID = 2;

  /** The kinds by name, at their event_type. */
  public static final String[] KINDS = {"person", "auction", "bid"};

  /** Mixed into every event's seed, so the events are not those of a seed of 0. */
  static final long SEED = 0x6E65786D61726BL; // "nexmark"

  /** The event id of the event at {@code index}. */
  public static long eventId(long index) {
    return GeneratorConfig.FIRST_EVENT_ID + GeneratorConfig.eventNumber(index);
  }

  /** The kind (PERSON, AUCTION, BID) of the event at {@code index}. */
  public static int kind(GeneratorConfig config, long index) {
    long rem = eventId(index) % config.totalProportion;
    if (rem < config.personProportion) {
      return PERSON;
    }
    return rem < config.personProportion + config.auctionProportion ? AUCTION : BID;
  }

  /** The event time (ms since epoch) of the event at {@code index}. */
  public static long timestamp(GeneratorConfig config, long index) {
    return config.timestampForEvent(GeneratorConfig.eventNumber(index));
  }

  /** The event at {@code index}: a Person, an Auction or a Bid of the model package. */
  public static Object event(GeneratorConfig config, long index) {
    long eventNumber = GeneratorConfig.eventNumber(index);
    long eventId = eventId(index);
    long timestamp = config.timestampForEvent(eventNumber);
    SplittableRandom random = random(eventId);
    return switch (kind(config, index)) {
      case PERSON -> PersonGenerator.nextPerson(eventId, random, timestamp, config);
      case AUCTION -> AuctionGenerator.nextAuction(eventNumber, eventId, random, timestamp, config);
      default -> BidGenerator.nextBid(eventId, random, timestamp, config);
    };
  }

  /** The random of one event: its id through a 64-bit finalizer (MurmurHash3's fmix64). */
  static SplittableRandom random(long eventId) {
    long h = eventId ^ SEED;
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return new SplittableRandom(h);
  }
}

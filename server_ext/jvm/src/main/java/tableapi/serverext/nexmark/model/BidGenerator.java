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
 * nexmark-flink/src/main/java/com/github/nexmark/flink/generator/model/BidGenerator.java.
 * Changes: a Bid record with dateTime in ms since epoch; the hot URLs and the channels' URLs are
 * drawn from a SplittableRandom of a fixed seed (Nexmark's is unseeded: each JVM had other
 * URLs). Kept as in Nexmark: FIRST_PERSON_ID is added to the bidder twice (bidders are 2000 +
 * a base-0 person id, sellers and persons 1000 + it).
 */
package tableapi.serverext.nexmark.model;

import java.util.SplittableRandom;
import tableapi.serverext.nexmark.GeneratorConfig;

/** Generates bids. */
public final class BidGenerator {
  private BidGenerator() {}

  /**
   * Fraction of people/auctions which may be 'hot' sellers/bidders/auctions are 1 over these
   * values.
   */
  private static final int HOT_AUCTION_RATIO = 100;

  private static final int HOT_BIDDER_RATIO = 100;

  private static final int HOT_CHANNELS_RATIO = 2;

  private static final int CHANNELS_NUMBER = 10_000;

  private static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};

  /** The fixed seed of the URLs (determinism across JVMs). */
  static final long URL_SEED = 0x4E65786D55524CL; // "NexmURL"

  private static final String[] HOT_URLS;
  private static final String[] CHANNELS = new String[CHANNELS_NUMBER];
  private static final String[] CHANNEL_URLS = new String[CHANNELS_NUMBER];

  static {
    // One random for both, drawn in Nexmark's order: the four hot URLs, then the channels'.
    SplittableRandom random = new SplittableRandom(URL_SEED);
    HOT_URLS =
        new String[] {
          getBaseUrl(random), getBaseUrl(random), getBaseUrl(random), getBaseUrl(random)
        };
    for (int i = 0; i < CHANNELS_NUMBER; ++i) {
      String url = getBaseUrl(random);
      if (random.nextInt(10) > 0) {
        url = url + "&channel_id=" + Math.abs(Integer.reverse(i));
      }
      CHANNELS[i] = "channel-" + i;
      CHANNEL_URLS[i] = url;
    }
  }

  /** Generate and return a random bid with next available id. */
  public static Bid nextBid(
      long eventId, SplittableRandom random, long timestamp, GeneratorConfig config) {

    long auction;
    // Here P(bid will be for a hot auction) = 1 - 1/hotAuctionRatio.
    if (random.nextInt(config.hotAuctionRatio) > 0) {
      // Choose the first auction in the batch of last HOT_AUCTION_RATIO auctions.
      auction =
          (AuctionGenerator.lastBase0AuctionId(config, eventId) / HOT_AUCTION_RATIO)
              * HOT_AUCTION_RATIO;
    } else {
      auction = AuctionGenerator.nextBase0AuctionId(eventId, random, config);
    }
    auction += GeneratorConfig.FIRST_AUCTION_ID;

    long bidder;
    // Here P(bid will be by a hot bidder) = 1 - 1/hotBiddersRatio
    if (random.nextInt(config.hotBiddersRatio) > 0) {
      // Choose the second person (so hot bidders and hot sellers don't collide) in the batch of
      // last HOT_BIDDER_RATIO people.
      bidder =
          (PersonGenerator.lastBase0PersonId(config, eventId) / HOT_BIDDER_RATIO)
                  * HOT_BIDDER_RATIO
              + 1;
    } else {
      bidder = PersonGenerator.nextBase0PersonId(eventId, random, config);
    }
    bidder += GeneratorConfig.FIRST_PERSON_ID;

    long price = PriceGenerator.nextPrice(random);

    String channel;
    String url;
    if (random.nextInt(HOT_CHANNELS_RATIO) > 0) {
      int i = random.nextInt(HOT_CHANNELS.length);
      channel = HOT_CHANNELS[i];
      url = HOT_URLS[i];
    } else {
      int channelNumber = random.nextInt(CHANNELS_NUMBER);
      channel = CHANNELS[channelNumber];
      url = CHANNEL_URLS[channelNumber];
    }

    bidder += GeneratorConfig.FIRST_PERSON_ID;

    int currentSize = 8 + 8 + 8 + 8;
    String extra = StringsGenerator.nextExtra(random, currentSize, config.avgBidByteSize);
    return new Bid(auction, bidder, price, channel, url, timestamp, extra);
  }

  private static String getBaseUrl(SplittableRandom random) {
    return "https://www.nexmark.com/"
        + StringsGenerator.nextString(random, 5, '_')
        + '/'
        + StringsGenerator.nextString(random, 5, '_')
        + '/'
        + StringsGenerator.nextString(random, 5, '_')
        + '/'
        + "item.htm?query=1";
  }
}

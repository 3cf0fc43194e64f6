/*
 * Nexmark's Bid (https://github.com/nexmark/nexmark, Apache 2.0:
 * nexmark-flink/src/main/java/com/github/nexmark/flink/model/Bid.java) as a record, its fields in
 * the order of Nexmark's view 'bid' (queries/ddl_views.sql); dateTime in ms since epoch.
 */
package tableapi.serverext.nexmark.model;

/** A bid for an item on auction. */
public record Bid(
    long auction,
    long bidder,
    long price,
    String channel,
    String url,
    long dateTime,
    String extra) {}

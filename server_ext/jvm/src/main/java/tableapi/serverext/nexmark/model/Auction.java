/*
 * Nexmark's Auction (https://github.com/nexmark/nexmark, Apache 2.0:
 * nexmark-flink/src/main/java/com/github/nexmark/flink/model/Auction.java) as a record, its
 * fields in the order of Nexmark's view 'auction' (queries/ddl_views.sql); times in ms since
 * epoch.
 */
package tableapi.serverext.nexmark.model;

/** An auction submitted by a person. */
public record Auction(
    long id,
    String itemName,
    String description,
    long initialBid,
    long reserve,
    long dateTime,
    long expires,
    long seller,
    long category,
    String extra) {}

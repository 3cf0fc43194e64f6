/*
 * Nexmark's Person (https://github.com/nexmark/nexmark, Apache 2.0:
 * nexmark-flink/src/main/java/com/github/nexmark/flink/model/Person.java) as a record, its fields
 * in the order of Nexmark's view 'person' (queries/ddl_views.sql); dateTime in ms since epoch.
 */
package tableapi.serverext.nexmark.model;

/** A person, either a bidder or a seller. */
public record Person(
    long id,
    String name,
    String emailAddress,
    String creditCard,
    String city,
    String state,
    long dateTime,
    String extra) {}

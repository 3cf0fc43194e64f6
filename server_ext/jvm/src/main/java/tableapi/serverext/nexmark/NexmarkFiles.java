/*
 * Writes Nexmark's events (this package's port of Nexmark's generator, Apache 2.0) to CSV files:
 * the events of a Flink 'nexmark' table as files any engine reads.
 */
package tableapi.serverext.nexmark;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import tableapi.serverext.nexmark.model.Auction;
import tableapi.serverext.nexmark.model.Bid;
import tableapi.serverext.nexmark.model.Person;

/**
 * {@code java -cp tableapi-server-ext.jar tableapi.serverext.nexmark.NexmarkFiles --events N
 * --out DIR [--parts P] [--first-event.rate R] [--<any Nexmark option> V]} writes the first N
 * events to {@code DIR/person/}, {@code DIR/auction/} and {@code DIR/bid/}, P files {@code
 * part-<i>.csv} each (default 1): CSV without a header, the columns of Nexmark's views
 * (queries/ddl_views.sql), timestamps {@code yyyy-MM-dd HH:mm:ss.SSS} in UTC, an empty string
 * written as {@code ""} (so it is not read as NULL). A Nexmark option may be spelled with dashes
 * ({@code --first-event-rate}); {@code --events} is 'events.num'.
 */
public final class NexmarkFiles {
  private NexmarkFiles() {}

  private static final String USAGE =
      "usage: NexmarkFiles --events N --out DIR [--parts P] [--<Nexmark option> VALUE ...]"
          + " (options: "
          + new java.util.TreeSet<>(GeneratorConfig.OPTIONS)
          + ")";

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new HashMap<>();
    Path out = null;
    int parts = 1;
    for (int i = 0; i < args.length; i += 2) {
      String flag = args[i];
      if (!flag.startsWith("--") || i + 1 >= args.length) {
        fail("expected '--name value', got '" + flag + "'");
      }
      String name = flag.substring(2);
      String value = args[i + 1];
      switch (name) {
        case "out" -> out = Path.of(value);
        case "parts" -> parts = Integer.parseInt(value);
        case "events" -> options.put("events.num", value);
        default -> options.put(optionName(name), value);
      }
    }
    if (out == null || !options.containsKey("events.num")) {
      fail("--events and --out are required");
    }
    GeneratorConfig config;
    try {
      config = GeneratorConfig.of(options);
    } catch (IllegalArgumentException e) {
      fail(e.getMessage());
      return;
    }
    if (config.unbounded() || parts < 1) {
      fail("--events must be positive and --parts at least 1");
    }
    long start = System.nanoTime();
    long[] counts = write(config, out, parts);
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT,
        "wrote %d events (%d person, %d auction, %d bid) to %s in %.2f s (%.0f events/s)%n",
        config.numEvents,
        counts[0],
        counts[1],
        counts[2],
        out,
        seconds,
        config.numEvents / seconds);
  }

  private static void fail(String message) {
    System.err.println("NexmarkFiles: " + message + "\n" + USAGE);
    System.exit(2);
  }

  /** The Nexmark option a flag names: its own spelling, or with dashes for its dots. */
  static String optionName(String flag) {
    if (GeneratorConfig.OPTIONS.contains(flag)) {
      return flag;
    }
    String bare = flag.replace("-", "").replace(".", "");
    for (String option : GeneratorConfig.OPTIONS) {
      if (option.replace("-", "").replace(".", "").equals(bare)) {
        return option;
      }
    }
    return flag; // unknown: GeneratorConfig.of refuses it, listing the options
  }

  /**
   * Write the events of {@code config} (events.num of them) under {@code out}, in {@code parts}
   * files per kind over consecutive index ranges; returns the number of events of each kind.
   */
  public static long[] write(GeneratorConfig config, Path out, int parts)
      throws IOException, InterruptedException {
    for (String kind : NexmarkGenerator.KINDS) {
      Path dir = out.resolve(kind);
      Files.createDirectories(dir);
      // A previous run's parts would add their rows to this run's.
      try (DirectoryStream<Path> old = Files.newDirectoryStream(dir, "part-*.csv")) {
        for (Path p : old) {
          Files.delete(p);
        }
      }
    }
    ExecutorService pool =
        Executors.newFixedThreadPool(Math.min(parts, Runtime.getRuntime().availableProcessors()));
    try {
      List<Future<long[]>> done = new ArrayList<>();
      long n = config.numEvents;
      for (int p = 0; p < parts; p++) {
        long from = n * p / parts;
        long to = n * (p + 1) / parts;
        int part = p;
        done.add(pool.submit(() -> writePart(config, out, part, from, to)));
      }
      long[] counts = new long[3];
      for (Future<long[]> f : done) {
        long[] c;
        try {
          c = f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          if (e.getCause() instanceof IOException io) {
            throw io;
          }
          throw new IllegalStateException(e.getCause());
        }
        for (int k = 0; k < 3; k++) {
          counts[k] += c[k];
        }
      }
      return counts;
    } finally {
      pool.shutdown();
    }
  }

  private static long[] writePart(GeneratorConfig config, Path out, int part, long from, long to)
      throws IOException {
    String name = "part-" + part + ".csv";
    Path[] tmp = new Path[3];
    Writer[] writers = new Writer[3];
    long[] counts = new long[3];
    try {
      for (int k = 0; k < 3; k++) {
        // Hidden until complete: Spark and Flink skip files whose names start with '.'.
        tmp[k] = out.resolve(NexmarkGenerator.KINDS[k]).resolve("." + name + ".tmp");
        writers[k] =
            new BufferedWriter(
                Files.newBufferedWriter(tmp[k], StandardCharsets.UTF_8), 1 << 16);
      }
      StringBuilder line = new StringBuilder(1024);
      for (long i = from; i < to; i++) {
        line.setLength(0);
        int kind = csvLine(NexmarkGenerator.event(config, i), line);
        writers[kind].append(line);
        counts[kind]++;
      }
    } finally {
      for (Writer w : writers) {
        if (w != null) {
          w.close();
        }
      }
    }
    for (int k = 0; k < 3; k++) {
      Files.move(
          tmp[k],
          out.resolve(NexmarkGenerator.KINDS[k]).resolve(name),
          StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    }
    return counts;
  }

  /** Append an event's CSV line (with its newline) to {@code sb}; returns its kind. */
  public static int csvLine(Object event, StringBuilder sb) {
    if (event instanceof Bid b) {
      sb.append(b.auction()).append(',').append(b.bidder()).append(',').append(b.price());
      text(sb.append(','), b.channel());
      text(sb.append(','), b.url());
      time(sb.append(','), b.dateTime());
      text(sb.append(','), b.extra());
      sb.append('\n');
      return NexmarkGenerator.BID;
    }
    if (event instanceof Auction a) {
      sb.append(a.id());
      text(sb.append(','), a.itemName());
      text(sb.append(','), a.description());
      sb.append(',').append(a.initialBid()).append(',').append(a.reserve());
      time(sb.append(','), a.dateTime());
      time(sb.append(','), a.expires());
      sb.append(',').append(a.seller()).append(',').append(a.category());
      text(sb.append(','), a.extra());
      sb.append('\n');
      return NexmarkGenerator.AUCTION;
    }
    Person p = (Person) event;
    sb.append(p.id());
    text(sb.append(','), p.name());
    text(sb.append(','), p.emailAddress());
    text(sb.append(','), p.creditCard());
    text(sb.append(','), p.city());
    text(sb.append(','), p.state());
    time(sb.append(','), p.dateTime());
    text(sb.append(','), p.extra());
    sb.append('\n');
    return NexmarkGenerator.PERSON;
  }

  /** A string field: as is (Nexmark's never hold a comma, a quote or a line break), an empty one
   * quoted ("" is read as an empty string, an empty field as NULL), any other quoted as RFC 4180
   * says. */
  static void text(StringBuilder sb, String s) {
    boolean quote = s.isEmpty();
    for (int i = 0; i < s.length() && !quote; i++) {
      char c = s.charAt(i);
      quote = c == ',' || c == '"' || c == '\n' || c == '\r';
    }
    if (!quote) {
      sb.append(s);
      return;
    }
    sb.append('"').append(s.replace("\"", "\"\"")).append('"');
  }

  /** A timestamp field: {@code yyyy-MM-dd HH:mm:ss.SSS} in UTC. */
  static void time(StringBuilder sb, long epochMs) {
    long day = Math.floorDiv(epochMs, 86_400_000L);
    long ms = Math.floorMod(epochMs, 86_400_000L);
    LocalDate d = LocalDate.ofEpochDay(day);
    pad(sb, d.getYear(), 4).append('-');
    pad(sb, d.getMonthValue(), 2).append('-');
    pad(sb, d.getDayOfMonth(), 2).append(' ');
    pad(sb, ms / 3_600_000L, 2).append(':');
    pad(sb, ms / 60_000L % 60, 2).append(':');
    pad(sb, ms / 1000L % 60, 2).append('.');
    pad(sb, ms % 1000L, 3);
  }

  private static StringBuilder pad(StringBuilder sb, long v, int width) {
    String s = Long.toString(v);
    for (int i = s.length(); i < width; i++) {
      sb.append('0');
    }
    return sb.append(s);
  }
}

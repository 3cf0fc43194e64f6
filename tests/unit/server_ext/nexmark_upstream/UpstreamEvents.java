import com.github.nexmark.flink.NexmarkConfiguration;
import com.github.nexmark.flink.generator.GeneratorConfig;
import com.github.nexmark.flink.generator.NexmarkGenerator;
import com.github.nexmark.flink.model.Auction;
import com.github.nexmark.flink.model.Bid;
import com.github.nexmark.flink.model.Event;
import com.github.nexmark.flink.model.Person;
import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Nexmark's own generator, compiled from its sources with the port's seeds patched in by
 * test_nexmark_upstream.py, writing "kind|csv line" in the port's CSV format. Args: events, out,
 * first-event.rate, person, auction, bid proportions, person, auction, bid average sizes.
 */
public class UpstreamEvents {
  static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

  static String t(Instant i) {
    return TIME.format(i);
  }

  static String s(String v) {
    return v.isEmpty() ? "\"\"" : v;
  }

  static String line(Object... fields) {
    StringBuilder sb = new StringBuilder();
    for (Object f : fields) {
      sb.append(sb.length() == 0 ? "" : ",").append(f);
    }
    return sb.toString();
  }

  public static void main(String[] a) throws Exception {
    long n = Long.parseLong(a[0]);
    NexmarkConfiguration c = new NexmarkConfiguration();
    c.numEvents = n;
    c.firstEventRate = Integer.parseInt(a[2]);
    c.personProportion = Integer.parseInt(a[3]);
    c.auctionProportion = Integer.parseInt(a[4]);
    c.bidProportion = Integer.parseInt(a[5]);
    c.avgPersonByteSize = Integer.parseInt(a[6]);
    c.avgAuctionByteSize = Integer.parseInt(a[7]);
    c.avgBidByteSize = Integer.parseInt(a[8]);
    // As NexmarkTableSourceFactory at parallelism 1, the base time the port's default.
    GeneratorConfig g = new GeneratorConfig(c, 1704067200000L, 1, n, c.stopAtEvent, 1);
    NexmarkGenerator gen = new NexmarkGenerator(g);
    try (PrintWriter w = new PrintWriter(new BufferedWriter(new FileWriter(a[1])))) {
      while (gen.hasNext()) {
        Event e = gen.next().event;
        if (e.newPerson != null) {
          Person p = e.newPerson;
          w.println("person|" + line(p.id, s(p.name), s(p.emailAddress), s(p.creditCard),
              s(p.city), s(p.state), t(p.dateTime), s(p.extra)));
        } else if (e.newAuction != null) {
          Auction x = e.newAuction;
          w.println("auction|" + line(x.id, s(x.itemName), s(x.description), x.initialBid,
              x.reserve, t(x.dateTime), t(x.expires), x.seller, x.category, s(x.extra)));
        } else {
          Bid b = e.bid;
          w.println("bid|" + line(b.auction, b.bidder, b.price, s(b.channel), s(b.url),
              t(b.dateTime), s(b.extra)));
        }
      }
    }
  }
}

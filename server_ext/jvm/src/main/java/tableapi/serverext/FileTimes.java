package tableapi.serverext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.SparkEnv;
import org.apache.spark.deploy.SparkHadoopUtil;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The {@code file_time} relation: its input plus a BIGINT column, the modification time in
 * nanoseconds since the epoch of the file each row was read from (its {@code path} column,
 * Spark's {@code _metadata.file_path}). The client puts it first in a changelog row's {@code
 * __seq}: the changes of a file written after another are applied after the other's.
 *
 * <p>Spark's own {@code _metadata.file_modification_time} has milliseconds only, and files
 * written back to back mostly land in the same millisecond: their names then decided, and a
 * retraction could be applied before the row it retracts. A local file's time is read to the
 * nanosecond the filesystem keeps; another filesystem's (hdfs:, s3a:) as its milliseconds.
 *
 * <p>Where two files of one directory that hold rows still have the same time, their order is
 * unknown: the query fails, naming both files and the fix ({@code 'changelog.file-order' =
 * 'name'} for writers that number their files), rather than guess. A directory's listing is
 * kept per JVM and read again when a file it does not hold turns up (a new file: once per
 * micro-batch at most); a task asks about each file once (its rows come one after another).
 */
final class FileTimes {
  private FileTimes() {}

  /** The files of one directory: their times, and the files that share a time. */
  private record Listing(Map<String, Long> times, Map<Long, List<String>> byTime) {}

  private static final Map<String, Listing> DIRECTORIES = new ConcurrentHashMap<>();

  /** The last file a thread asked about (a task's rows come file after file). */
  private static final class Last {
    String path;
    long time;
  }

  private static final ThreadLocal<Last> LAST = ThreadLocal.withInitial(Last::new);

  /** The time of each row's file. */
  static final class Time implements UDF1<String, Long> {
    private static final long serialVersionUID = 1L;
    private final String table;

    Time(String table) {
      this.table = table;
    }

    @Override
    public Long call(String path) {
      if (path == null) return null;
      Last last = LAST.get();
      if (!path.equals(last.path)) {
        last.time = time(path, table);
        last.path = path;
      }
      return last.time;
    }
  }

  /**
   * {@code input} plus the column the spec names: {@code {"path": column, "name": new
   * column, "table": the table's name, for messages}}.
   */
  static Dataset<Row> withFileTime(Dataset<Row> input, String specJson) {
    Specs.FileTime spec = Specs.FileTime.parse(specJson);
    String path = spec.path();
    String name = spec.name();
    List<String> columns = List.of(input.columns());
    if (!columns.contains(path) || name.isEmpty() || columns.contains(name)) {
      throw new IllegalArgumentException("file_time needs the path column '" + path
          + "' of the input and a new column name, got '" + name + "' for " + input.schema());
    }
    UserDefinedFunction time =
        functions.udf(new Time(spec.table()), DataTypes.LongType);
    return input.withColumn(name, time.apply(input.col(path)));
  }

  /** The time of the file at {@code uri}; fails on a tie within its directory. */
  static long time(String uri, String table) {
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("not a file URI: " + uri, e);
    }
    String scheme = parsed.getScheme();
    boolean local = scheme == null || scheme.equals("file");
    String file = local ? Paths.get(scheme == null ? uri : parsed.getPath()).toString()
        : parsed.toString();
    String dir = local ? String.valueOf(Paths.get(file).getParent())
        : new org.apache.hadoop.fs.Path(parsed).getParent().toString();
    Listing listing = DIRECTORIES.get(dir);
    if (listing == null || !listing.times().containsKey(file)) {
      listing = local ? listLocal(dir) : listHadoop(dir);
      DIRECTORIES.put(dir, listing);
    }
    Long time = listing.times().get(file);
    if (time == null) { // not listed (removed since?): its own time, no tie to check
      return local ? localTime(Paths.get(file)) : hadoopStatus(parsed).getModificationTime()
          * 1_000_000L;
    }
    List<String> tied = listing.byTime().get(time);
    if (tied.size() > 1) {
      String other = tied.get(0).equals(file) ? tied.get(1) : tied.get(0);
      throw new IllegalStateException("Changelog files " + other + " and " + file
          + (table.isEmpty() ? "" : " of table " + table)
          + " have the same modification time (" + Instant.EPOCH.plusNanos(time)
          + (local ? "" : ", to the millisecond")
          + "): the order of their changes is unknown. Write each file after the previous one"
          + " is complete (distinct modification times), or name the files in the order they"
          + " must be applied and set 'changelog.file-order' = 'name' on the table.");
    }
    return time;
  }

  private static long localTime(Path file) {
    try {
      return Files.getLastModifiedTime(file).to(TimeUnit.NANOSECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Spark's reader skips names starting with '_' or '.'; an empty file holds no rows. */
  private static boolean holdsRows(String name, long length, boolean directory) {
    return !directory && length > 0 && !name.startsWith("_") && !name.startsWith(".");
  }

  private static Listing listLocal(String dir) {
    Map<String, Long> times = new HashMap<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(Paths.get(dir))) {
      for (Path f : files) {
        BasicFileAttributes a;
        try {
          a = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException gone) {
          continue; // removed while listed (a writer's temporary file)
        }
        if (holdsRows(f.getFileName().toString(), a.size(), a.isDirectory())) {
          times.put(f.toString(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return listing(times);
  }

  private static Configuration hadoopConf() {
    SparkEnv env = SparkEnv.get();
    return env == null ? new Configuration()
        : SparkHadoopUtil.get().newConfiguration(env.conf());
  }

  private static FileStatus hadoopStatus(URI file) {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(file);
    try {
      return path.getFileSystem(hadoopConf()).getFileStatus(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Listing listHadoop(String dir) {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(dir);
    Map<String, Long> times = new HashMap<>();
    try {
      FileSystem fs = path.getFileSystem(hadoopConf());
      for (FileStatus s : fs.listStatus(path)) {
        if (holdsRows(s.getPath().getName(), s.getLen(), s.isDirectory())) {
          times.put(s.getPath().toString(), s.getModificationTime() * 1_000_000L);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return listing(times);
  }

  private static Listing listing(Map<String, Long> times) {
    Map<Long, List<String>> byTime = new HashMap<>();
    times.forEach((f, t) -> byTime.computeIfAbsent(t, k -> new ArrayList<>()).add(f));
    byTime.values().forEach(files -> files.sort(null));
    return new Listing(Map.copyOf(times), Map.copyOf(byTime));
  }
}

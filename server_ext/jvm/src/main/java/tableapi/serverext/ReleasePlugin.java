package tableapi.serverext;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.CommandPlugin;
import org.apache.spark.sql.execution.streaming.sources.MemoryPlan;
import org.apache.spark.sql.execution.streaming.state.StateStore$;
import org.apache.spark.sql.execution.streaming.state.StateStoreProviderId;
import org.sparkproject.connect.protobuf.Any;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The Spark Connect command plugin ({@code spark.connect.extensions.command.classes}) that lets
 * a finished streaming query's memory go. Spark keeps both after {@code query.stop()}:
 *
 * <ul>
 *   <li>the rows of its memory sink: Spark Connect keeps a stopped query (and so its sink) for
 *       an hour, whatever happens to the sink's temporary view. {@code view}: the sink's rows
 *       are cleared and its view dropped;
 *   <li>its state store providers, loaded in the executor's {@code StateStore} until the next
 *       maintenance (60 s) unloads those of stopped queries. {@code runId}: this JVM's loaded
 *       providers of that run are closed now (a local master runs the executor here; on a
 *       cluster the executors' maintenance still does it).
 * </ul>
 *
 * The command is an {@code Any} of type {@link #TYPE_URL} whose value is UTF-8 JSON: {@code
 * {"view": "tableapi_result_...", "runId": "..."}}, either may be null. Twin: {@code
 * tableapi/execution/release.py}.
 */
public final class ReleasePlugin implements CommandPlugin {
  public static final String TYPE_URL = "type.googleapis.com/tableapi.serverext.Release";
  private static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public boolean process(byte[] command, SparkConnectPlanner planner) {
    Any any;
    JsonNode spec;
    try { // the whole serialized Any arrives, not just its value
      any = Any.parseFrom(command);
      if (!TYPE_URL.equals(any.getTypeUrl())) return false;
      spec = JSON.readTree(any.getValue().toString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("malformed server_ext release command", e);
    }
    JsonNode view = spec.get("view");
    if (view != null && !view.isNull()) clearMemorySink(planner.session(), view.asText());
    JsonNode runId = spec.get("runId");
    if (runId != null && !runId.isNull()) unloadStateStores(UUID.fromString(runId.asText()));
    return true;
  }

  /** Clears the memory sink behind temporary view {@code view} and drops the view. */
  static void clearMemorySink(SparkSession session, String view) {
    if (session.sessionState().catalog().getTempView(view).isEmpty()) return;
    LogicalPlan plan = session.table(view).queryExecution().analyzed();
    for (LogicalPlan leaf : CollectionConverters.asJava(plan.collectLeaves())) {
      if (leaf instanceof MemoryPlan memory) memory.sink().clear();
    }
    session.catalog().dropTempView(view);
  }

  /** Closes this JVM's loaded state store providers of the query run {@code runId}. */
  static int unloadStateStores(UUID runId) {
    StateStore$ stores = StateStore$.MODULE$;
    scala.collection.mutable.HashMap<StateStoreProviderId, ?> loaded;
    try { // private: Spark has no public way to list them
      Method method = StateStore$.class.getDeclaredMethod("loadedProviders");
      method.setAccessible(true);
      loaded = (scala.collection.mutable.HashMap<StateStoreProviderId, ?>) method.invoke(stores);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return 0; // another Spark: the maintenance task unloads them in time
    }
    List<StateStoreProviderId> ours = new ArrayList<>();
    synchronized (loaded) { // the lock Spark takes around this map
      for (StateStoreProviderId id : CollectionConverters.asJava(loaded.keySet())) {
        if (runId.equals(id.queryRunId())) ours.add(id);
      }
    }
    for (StateStoreProviderId id : ours) stores.removeFromLoadedProvidersAndClose(id);
    return ours.size();
  }
}

package tableapi.serverext;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The one base of the plugin's own Catalyst nodes, a logical {@link Logical} and a physical
 * {@link Physical} (Scala case classes written in Java): one child, the columns the node
 * makes, a name, and its product (the child, then {@link Logical#fields()}, which must be the
 * constructor's other arguments in order: Spark's tree copies a node by its product). A node
 * only adds its constructor, {@code withNewChildrenInternal}, {@code fields()} and (physical)
 * {@code doExecute}.
 */
public final class PluginNodes {
  private PluginNodes() {}

  /** The columns a node makes ({@code output}): not missing from its input. */
  static AttributeSet produced(Seq<Attribute> output) {
    @SuppressWarnings("unchecked")
    scala.collection.Iterable<Expression> columns =
        (scala.collection.Iterable<Expression>) (scala.collection.Iterable<?>) output;
    return AttributeSet.apply(columns);
  }

  private static Object element(Object child, Object[] fields, int n) {
    if (n == 0) return child;
    if (n < 0 || n > fields.length) throw new IndexOutOfBoundsException(n);
    return fields[n - 1];
  }

  /** A logical node of one child. */
  public abstract static class Logical extends LogicalPlan {
    private static final long serialVersionUID = 1L;
    protected final LogicalPlan child;
    private final Seq<Attribute> output;
    private final String name;

    protected Logical(String name, LogicalPlan child, Seq<Attribute> output) {
      this.name = name;
      this.child = child;
      this.output = output;
    }

    /** The constructor's arguments after the child, in order (the rest of the product). */
    protected abstract Object[] fields();

    @Override
    public Seq<Attribute> output() {
      return output;
    }

    @Override
    public Seq<LogicalPlan> children() {
      return CollectionConverters.asScala(List.of(child)).toList();
    }

    @Override
    public AttributeSet producedAttributes() {
      return produced(output);
    }

    @Override
    public String nodeName() {
      return name;
    }

    @Override
    public int productArity() {
      return 1 + fields().length;
    }

    @Override
    public Object productElement(int n) {
      return element(child, fields(), n);
    }

    @Override
    public boolean canEqual(Object that) {
      return that != null && that.getClass() == getClass();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Logical l && canEqual(o) && child.equals(l.child)
          && Arrays.equals(fields(), l.fields());
    }

    @Override
    public int hashCode() {
      return 31 * child.hashCode() + Arrays.hashCode(fields());
    }
  }

  /** A physical node of one child. */
  public abstract static class Physical extends SparkPlan {
    private static final long serialVersionUID = 1L;
    protected final SparkPlan child;
    private final Seq<Attribute> output;
    private final String name;

    protected Physical(String name, SparkPlan child, Seq<Attribute> output) {
      this.name = name;
      this.child = child;
      this.output = output;
    }

    /** The constructor's arguments after the child, in order (the rest of the product). */
    protected abstract Object[] fields();

    @Override
    public Seq<Attribute> output() {
      return output;
    }

    @Override
    public Seq<SparkPlan> children() {
      return CollectionConverters.asScala(List.of(child)).toList();
    }

    @Override
    public AttributeSet producedAttributes() {
      return produced(output);
    }

    @Override
    public String nodeName() {
      return name;
    }

    @Override
    public int productArity() {
      return 1 + fields().length;
    }

    @Override
    public Object productElement(int n) {
      return element(child, fields(), n);
    }

    @Override
    public boolean canEqual(Object that) {
      return that != null && that.getClass() == getClass();
    }
  }
}

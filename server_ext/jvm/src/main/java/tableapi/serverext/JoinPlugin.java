package tableapi.serverext;

/**
 * The plugin's former name, kept so that a server configured with {@code
 * spark.connect.extensions.relation.classes=tableapi.serverext.JoinPlugin} keeps working; new
 * configurations name {@link OperatorPlugin}.
 */
@Deprecated
public final class JoinPlugin extends OperatorPlugin {}

"""server_ext's JVM half: Flink-semantics join operators as Java ``flatMapGroupsWithState``
functions behind a Spark Connect ``RelationPlugin``.

- ``src/main/java/tableapi/serverext/``: the plugin and operators (one class per concern:
  ``OperatorPlugin`` with its registries of operators and relations, ``Operator``, ``Wire`` +
  ``Specs`` (the typed spec records) + ``JoinSpec``, ``RowCodec``, ``Condition``,
  ``SideView``, ``TimerService``, ``AggFunctions`` + ``AggsHandle``, ``JoinFunction`` with
  ``RegularJoin`` and ``SemiAntiJoin``, ...); ``src/test/java``: an in-memory harness that runs
  the functions without Spark.
- ``build.py``: ``javac`` against pyspark's jars into ``tableapi-server-ext.jar`` (in every
  wheel; in a source checkout built on first server start).
- ``wire.py``: the wire contract (type URL, payload, spec JSON), twin of ``Wire.java``.

The jar must be on the server when its JVM starts (``spark.jars``) and the plugins registered
(``spark.connect.extensions.relation.classes``: the operators; ``...command.classes``: the
release of a finished query's memory); ``python -m server_ext serve`` does both.

Example::

    from server_ext.jvm import plugin_conf
    conf = plugin_conf()  # {"spark.jars": ".../tableapi-server-ext.jar", ...}
"""

from __future__ import annotations

from server_ext.jvm.wire import PLUGIN_CLASS

RELATION_PLUGINS_CONF = "spark.connect.extensions.relation.classes"
COMMAND_PLUGINS_CONF = "spark.connect.extensions.command.classes"
#: The command plugin that lets a finished query's memory go (``ReleasePlugin.java``).
RELEASE_PLUGIN_CLASS = "tableapi.serverext.ReleasePlugin"
RELEASE_TYPE_URL = "type.googleapis.com/tableapi.serverext.Release"


def plugin_conf() -> dict[str, str]:
    """The Spark confs that put the operator jar on a server and register its plugins (the
    operators' relation plugin and the release command plugin), building the jar first in a
    source checkout. Raises ``JarUnavailable`` naming the fix."""
    from server_ext.jvm.build import ensure_jar

    return {
        "spark.jars": str(ensure_jar()),
        RELATION_PLUGINS_CONF: PLUGIN_CLASS,
        COMMAND_PLUGINS_CONF: RELEASE_PLUGIN_CLASS,
    }

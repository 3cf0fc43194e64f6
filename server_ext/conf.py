"""Spark confs that the client and the server agree on: the one place they are spelled.

Example::

    >>> STATE_STORE_PROVIDER
    'spark.sql.streaming.stateStore.providerClass'
"""

#: The server sets it to its ``server_ext`` version; the client checks it on connect.
VERSION_CONF = "spark.tableapi.serverExt.version"

#: Chosen per streaming query: server_ext's Python processors (transformWithState) need
#: RocksDB; Spark's native joins are faster on the default HDFS-backed store
#: (docs/architecture.md, "Facts measured").
STATE_STORE_PROVIDER = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"

#: Off for processing-time queries: otherwise ``processAllAvailable()`` never returns.
NO_DATA_MICRO_BATCHES = "spark.sql.streaming.noDataMicroBatches.enabled"

#: A streaming query's state partitions: fixed by its first checkpoint.
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"

#: Spark refuses a stateful operator after a stream-stream join ("possible 'correctness'
#: issue due to global watermark"): its own aggregations drop rows behind the watermark. The
#: product's operators after an interval join (GroupAggregate, joins) drop none, as Flink's.
CHECK_CORRECTNESS = "spark.sql.streaming.statefulOperator.checkCorrectness.enabled"

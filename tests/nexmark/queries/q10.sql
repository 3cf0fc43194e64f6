-- Nexmark's query 10, from https://github.com/nexmark/nexmark at commit 6b3646c3baec:
-- nexmark-flink/src/main/resources/queries/q10.sql, under the Apache License, Version 2.0
-- (http://www.apache.org/licenses/LICENSE-2.0). Adaptations: tests/nexmark/README.md.

-- -------------------------------------------------------------------------------------------------
-- Query 10: Log to File System (Not in original suite)
-- -------------------------------------------------------------------------------------------------
-- Log all events to file system. Illustrates windows streaming data into partitioned file system.
--
-- Every minute, save all events from the last period into partitioned log files.
-- -------------------------------------------------------------------------------------------------

CREATE TABLE nexmark_q10 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR,
  dt STRING,
  hm STRING
) WITH (
  -- Adapted (tests/nexmark/README.md): Nexmark writes partitioned CSV files,
  --   PARTITIONED BY (dt, hm) WITH ('connector' = 'filesystem', 'path' = ..., 'format' = 'csv',
  --   partition commit and rolling policies); the product has no partitioned sink.
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q10
SELECT auction, bidder, price, `dateTime`, extra, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd'), DATE_FORMAT(`dateTime`, 'HH:mm')
FROM bid;

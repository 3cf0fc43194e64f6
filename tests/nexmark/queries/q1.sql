-- Nexmark's query 1, from https://github.com/nexmark/nexmark at commit 6b3646c3baec:
-- nexmark-flink/src/main/resources/queries/q1.sql, under the Apache License, Version 2.0
-- (http://www.apache.org/licenses/LICENSE-2.0). Adaptations: tests/nexmark/README.md.

-- -------------------------------------------------------------------------------------------------
-- Query1: Currency conversion
-- -------------------------------------------------------------------------------------------------
-- Convert each bid value from dollars to euros. Illustrates a simple transformation.
-- -------------------------------------------------------------------------------------------------

CREATE TABLE nexmark_q1 (
  auction  BIGINT,
  bidder  BIGINT,
  price  DECIMAL(23, 3),
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q1
SELECT
    auction,
    bidder,
    0.908 * price as price, -- convert dollar to euro
    `dateTime`,
    extra
FROM bid;

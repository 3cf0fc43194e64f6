-- Nexmark's query 13, from https://github.com/nexmark/nexmark at commit 6b3646c3baec:
-- nexmark-flink/src/main/resources/queries/q13.sql, under the Apache License, Version 2.0
-- (http://www.apache.org/licenses/LICENSE-2.0). Adaptations: tests/nexmark/README.md.

-- -------------------------------------------------------------------------------------------------
-- Query 13: Bounded Side Input Join (Not in original suite)
-- -------------------------------------------------------------------------------------------------
-- Joins a stream to a bounded side input, modeling basic stream enrichment.
-- -------------------------------------------------------------------------------------------------

-- TODO: use the new "filesystem" connector once FLINK-17397 is done
CREATE TABLE side_input (
  key BIGINT,
  `value` VARCHAR
) WITH (
  -- Adapted (tests/nexmark/README.md): Nexmark's legacy CSV source, a lookup source, is gone
  -- from Flink 2.x, and Flink's filesystem connector is no lookup source. Each side fills in
  -- a lookup source over the same rows (Nexmark's side_input.txt: "i,i" for i < 10000).
  ${SIDE_INPUT_OPTIONS}
);

CREATE TABLE nexmark_q13 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  `value`  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.`dateTime`,
    S.`value`
FROM (SELECT *, PROCTIME() as p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON mod(B.auction, 10000) = S.key;

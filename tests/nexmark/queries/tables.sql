-- Nexmark's three event tables, declared directly over CSV files (one directory each, no
-- header). Nexmark declares one `datagen` table of ROW columns (queries/ddl_gen.sql) and the
-- views person, auction and bid over it (queries/ddl_views.sql); the product has no ROW type,
-- so these are tables with the views' columns, and each has the watermark Nexmark declares on
-- `datagen`. ${EVENTS_DIR} is the events' directory (tests.nexmark.conformance.write_events writes it).
-- 'csv.null-literal' = '\N' (server_ext.nexmark_files writes no NULL): an empty string,
-- written "", is '' on both sides (without a null literal the product reads it as NULL).

CREATE TABLE person (
    id  BIGINT,
    name  VARCHAR,
    emailAddress  VARCHAR,
    creditCard  VARCHAR,
    city  VARCHAR,
    state  VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra  VARCHAR,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'filesystem',
    'path' = '${EVENTS_DIR}/person',
    'format' = 'csv',
    'csv.null-literal' = '\N'
);

CREATE TABLE auction (
    id  BIGINT,
    itemName  VARCHAR,
    description  VARCHAR,
    initialBid  BIGINT,
    reserve  BIGINT,
    `dateTime`  TIMESTAMP(3),
    expires  TIMESTAMP(3),
    seller  BIGINT,
    category  BIGINT,
    extra  VARCHAR,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'filesystem',
    'path' = '${EVENTS_DIR}/auction',
    'format' = 'csv',
    'csv.null-literal' = '\N'
);

CREATE TABLE bid (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    url  VARCHAR,
    `dateTime`  TIMESTAMP(3),
    extra  VARCHAR,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'filesystem',
    'path' = '${EVENTS_DIR}/bid',
    'format' = 'csv',
    'csv.null-literal' = '\N'
);

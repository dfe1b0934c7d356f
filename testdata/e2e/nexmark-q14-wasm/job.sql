-- Nexmark q14 as the nexmark project publishes it, with its user function
-- count_char (how many bytes of a string equal a character's first byte)
-- as a WebAssembly module: examples/count_char, whose count_char.wasm `go
-- generate` also writes here. Bids whose converted price is outside
-- (1000000, 50000000) are dropped (auctions 2 and 5); a NULL extra counts
-- 0, as the published function does (auction 7); 'ç' and 'C' are not 'c'
-- (auctions 3 and 6).
CREATE FUNCTION count_char(s STRING, c STRING) RETURNS BIGINT CALLED ON NULL INPUT
AS 'count_char' LANGUAGE WASM USING JAR 'count_char.wasm';

CREATE TABLE bid (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  `dateTime` TIMESTAMP(3),
  extra VARCHAR
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.jsonl',
  'format' = 'json'
);

CREATE TABLE nexmark_q14 (
  auction BIGINT,
  bidder BIGINT,
  price DECIMAL(23, 3),
  bidTimeType VARCHAR,
  `dateTime` TIMESTAMP(3),
  extra VARCHAR,
  c_counts BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = 'q14.jsonl',
  'format' = 'json'
);

INSERT INTO nexmark_q14
SELECT
    auction,
    bidder,
    0.908 * price as price,
    CASE
        WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
        WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    `dateTime`,
    extra,
    count_char(extra, 'c')
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;

-- Nexmark q14 as the nexmark project publishes it (nexmark-flink queries/q14.sql).
-- Calculation: converted prices, the time of day, and the count of 'c's in
-- extra by a user function.
--
-- The published count_char is a Java class
-- (com.github.nexmark.flink.udf.CountChar); here it is the same function
-- as a WebAssembly module (examples/count_char, built from its source by
-- go generate), the form of user function Sluice runs without
-- recompiling. The path is relative to the repository's root.

CREATE FUNCTION count_char(s STRING, c STRING) RETURNS BIGINT CALLED ON NULL INPUT
AS 'count_char' LANGUAGE WASM USING JAR 'examples/count_char/count_char.wasm';

CREATE TABLE nexmark_q14 (
    auction BIGINT,
    bidder BIGINT,
    price  DECIMAL(23, 3),
    bidTimeType VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    c_counts BIGINT
) WITH (
  'connector' = 'blackhole'
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
    count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;

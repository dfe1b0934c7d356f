-- Nexmark q13 as the nexmark project publishes it: the side input declared
-- with Flink's legacy table options ('connector.type', 'connector.path',
-- 'format.type'), read as today's with a deprecation notice each, and a
-- sink of VARCHAR columns (VARCHAR without a length is STRING: computed
-- strings keep all their characters).
CREATE TABLE bid (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  channel VARCHAR,
  url VARCHAR
) WITH (
  'connector' = 'filesystem',
  'path' = 'bids.csv',
  'format' = 'csv'
);

CREATE TABLE side_input (
  key BIGINT,
  `value` VARCHAR
) WITH (
  'connector.type' = 'filesystem',
  'connector.path' = 'side_input.txt',
  'format.type' = 'csv'
);

CREATE TABLE nexmark_q13 (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  channel VARCHAR,
  `value` VARCHAR
) WITH (
  'connector' = 'filesystem',
  'path' = 'q13.jsonl',
  'format' = 'json'
);

INSERT INTO nexmark_q13
SELECT B.auction, B.bidder, B.price, UPPER(B.channel), S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10) = S.key;

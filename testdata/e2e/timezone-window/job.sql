-- Flink's "Time Zone" page, event time on TIMESTAMP_LTZ (MyView5): in
-- Asia/Shanghai, a TUMBLE over a TIMESTAMP_LTZ rowtime is aligned in
-- Shanghai time (22:00-22:10 for rows at 14:01Z-14:05Z); TUMBLE_ROWTIME is
-- the instant 14:09:59.999Z, which the json format writes in UTC.
SET 'table.local-time-zone' = 'Asia/Shanghai';

CREATE TABLE MyTable3 (
  item STRING,
  price DOUBLE,
  ts BIGINT,
  ts_ltz AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR ts_ltz AS ts_ltz - INTERVAL '10' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'items.csv',
  'format' = 'csv'
);

CREATE TABLE out (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  window_rowtime TIMESTAMP_LTZ(3),
  item STRING,
  max_price DOUBLE
) WITH (
  'connector' = 'filesystem',
  'path' = 'out.jsonl',
  'format' = 'json'
);

INSERT INTO out
SELECT
  TUMBLE_START(ts_ltz, INTERVAL '10' MINUTES),
  TUMBLE_END(ts_ltz, INTERVAL '10' MINUTES),
  TUMBLE_ROWTIME(ts_ltz, INTERVAL '10' MINUTES),
  item,
  MAX(price)
FROM MyTable3
GROUP BY TUMBLE(ts_ltz, INTERVAL '10' MINUTES), item;

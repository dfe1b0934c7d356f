-- Processing-time windows: bids per bidder per 10 seconds of wall clock.
CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;
SELECT bidder, COUNT(*) AS bid_count, window_start, window_end
FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;

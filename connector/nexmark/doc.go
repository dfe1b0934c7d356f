// Package nexmark implements the 'nexmark' connector: a source of the
// events of the Nexmark benchmark (an online auction), with the table
// layout Flink's Nexmark suite reads:
//
//	CREATE TABLE datagen (
//	  event_type INT,
//	  person  ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR,
//	              city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>,
//	  auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT,
//	              reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3),
//	              seller BIGINT, category BIGINT, extra VARCHAR>,
//	  bid     ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR,
//	              url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>,
//	  `dateTime` AS CASE WHEN event_type = 0 THEN person.`dateTime`
//	                     WHEN event_type = 1 THEN auction.`dateTime`
//	                     ELSE bid.`dateTime` END,
//	  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
//	) WITH ('connector' = 'nexmark', 'events.num' = '1000000');
//
// event_type is 0 for a person, 1 for an auction, 2 for a bid; the row of
// the event's kind is set and the other two are NULL. A ROW column may
// declare any of its fields, in any order.
//
// Table options:
//
//	'events.num'        total events; the source is bounded when set
//	'first-event.rate'  events per second of event time (default 10000,
//	                    above 0 and at most 1e12): event n happens at
//	                    base-time + n / rate
//	'base-time'         time of the first event, 'yyyy-MM-dd HH:mm:ss'
//	                    (default: when the job starts)
//	'rows-per-second'   (Sluice) wall-clock rate limit of the whole table
//	                    (default 0: none, as fast as the job reads; at
//	                    most 1e12)
//	'seed'              (Sluice) seed of the random choices (default 0)
//	'partitions'        (Sluice) number of partitions (default 1, at most
//	                    1024)
//
// The model: of every 50 events, 1 is a new person, 3 are new auctions and
// 46 are bids. IDs count up from 1000 (categories from 10, five of them).
// A bid goes, half of the time, to a hot auction (the newest ones) and
// otherwise to one of the last 100 auctions; three bids in four come from
// hot bidders (the newest people), the rest from the last 1000 people;
// sellers likewise. Prices are spread over six orders of magnitude. A
// bid's channel is one of four named ones nine times in ten. An auction
// expires some events after it opens, so that bids on it arrive while it
// is open.
//
// Invariants: event n is a function of (seed, n) only, so every partition
// split and every replay gives the same events; partition p of P holds
// the events n = p, p+P, p+2P, ... as origin offsets 1, 2, 3, ..., in
// event-time order; a bounded table yields exactly events.num events.
package nexmark

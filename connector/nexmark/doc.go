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
// Table options, as the nexmark project's generator (nexmark-flink)
// names them and with its defaults:
//
//	'events.num'         total events (default 0: no limit); the table
//	                     is bounded when it is above 0
//	'stop-at'            end after this many events (default -1: no
//	                     stop); bounded, like 'events.num'
//	'keep-alive'         after the last event, stay open instead of
//	                     ending (default false)
//	'first-event.rate'   events per second of event time (default 10000,
//	                     above 0 and at most 1e12)
//	'next-event.rate'    a second rate (default: first-event.rate); when it
//	                     differs, the rate follows 'rate.shape'
//	'rate.shape'         'square' (first rate, then next, by halves of
//	                     the period) or 'sine' (ten steps from the first
//	                     rate to the next and back); default square
//	'rate.period'        the period of the shape (default 10 min)
//	'max-emit-speed'     emit as fast as the job reads (default true);
//	                     false: event k is emitted once as much wall-clock
//	                     time has passed since the first as event time
//	'rate.limited'       true: the same as 'max-emit-speed' false
//	'person.proportion', 'auction.proportion', 'bid.proportion'
//	                     shares of the event kinds (default 1, 3, 46)
//	'person.avg-size', 'auction.avg-size', 'bid.avg-size'
//	                     average sizes of the events in bytes (default
//	                     200b, 500b, 100b), reached by padding 'extra'
//	'auction.hot-ratio.sellers', 'bid.hot-ratio.bidders',
//	'bid.hot-ratio.auctions'
//	                     one pick in ratio is random, the others go to the
//	                     hot seller, bidder, auction (default 4, 4, 2; 1:
//	                     none hot)
//	'base-time'          time of the reference's event number 0,
//	                     'yyyy-MM-dd HH:mm:ss' (default: when the job
//	                     starts)
//	'rows-per-second'    (Sluice) wall-clock rate limit of the whole table
//	                     (default 0: none; at most 1e12)
//	'seed'               (Sluice) seed of the random choices (default 0)
//	'partitions'         (Sluice) number of partitions (default 1, at most
//	                     1024)
//
// The model is the reference generator's. Event n (from 0) of the table
// is the reference's event number n+1 with the event id n+2, of one
// generator: its kind is the id's place in a cycle of person.proportion +
// auction.proportion + bid.proportion ids (people first, then auctions),
// so the first event is an auction; its time is base-time plus event
// number / rate, in whole milliseconds (over the steps of the rate shape
// when there are two rates). People and auctions are numbered from 1000 by
// their place in the cycle (the reference's first event ids do not create
// person 1000 or auction 1000); categories are 10 to 14.
//
// An auction's seller is the hot seller (the first of the newest group of
// 100 people) unless one pick in auction.hot-ratio.sellers, which takes
// one of the last 1000 people or one of the next 10. It expires after a
// random time averaging how long 100 more auctions take to arrive. A bid
// goes to the hot auction (the first of the newest group of 100) unless
// one pick in bid.hot-ratio.auctions, which takes one of the last 100
// auctions or the next 10; it comes from the hot bidder (the second of
// the newest group of 100 people, so not the hot seller) unless one pick
// in bid.hot-ratio.bidders. As in the reference, a bidder's ID carries the
// first person ID twice, so bidders run 1000 above people's IDs. Prices
// are cents from 1.00 to 1,000,000.00, log-uniform. Half the bids come
// through one of four named channels (Google, Facebook, Baidu, Apple),
// each with its own URL; the others through one of 10,000 channels
// 'channel-i', each with its own URL, nine in ten of which end in
// '&channel_id=' and the bits of i reversed. Names, e-mail addresses,
// item names and descriptions are random strings with a space (URL
// directories an underscore) in one character of 13. 'extra' pads each
// event from its size (as the reference counts it: 8 bytes a number or
// time, a string's length) to the average size, within 20%; it is a
// slice of a pool of random letters, so padding costs no allocation.
//
// Where Sluice departs from the reference (nexmark-flink as of commit
// 6b3646c): its channels' URLs come from an unseeded random generator,
// Sluice's from 'seed'; its parallel generators each run their own
// timeline of ids, Sluice's partitions split one; it accepts
// 'next-event.rate', 'rate.shape' and 'rate.period' but times every event
// at the first rate, and stores 'rate.limited' without using it, where
// Sluice follows the shape as the original Nexmark generator (Apache
// Beam's) did and paces by event time. With the published DDL's
// 'next-event.rate' equal to 'first-event.rate' the two agree.
//
// Invariants: event n is a function of (seed, n) and the options only, so
// every partition split and every replay gives the same events;
// partition p of P holds the events n = p, p+P, p+2P, ... as origin
// offsets 1, 2, 3, ..., in event-time order; a bounded table yields
// exactly min(events.num, stop-at) events.
package nexmark

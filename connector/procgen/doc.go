// Package procgen implements the 'procgen' connector: a source of
// process-creation events, the input of detection rules (which process
// started which, on which host, as which user, with which command line),
// with the heavy repetition of real endpoint telemetry:
//
//	CREATE TABLE process_events (
//	  event_time      TIMESTAMP(3),
//	  host            STRING,
//	  user_name       STRING,
//	  parent_image    STRING,
//	  image           STRING,
//	  command_line    STRING,
//	  pid             BIGINT,
//	  parent_pid      BIGINT,
//	  integrity_level STRING,
//	  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND
//	) WITH ('connector' = 'procgen', 'events.num' = '1000000');
//
// A table declares any of these columns, in any order (names are matched
// without regard to case); strings may be STRING, VARCHAR(n) or CHAR(n),
// event_time TIMESTAMP(3) or TIMESTAMP_LTZ(3).
//
// The model: a catalog of 'catalog.size' processes (parent image, image,
// command line), each drawn from templates of common Windows and Linux
// activity (service hosts, shells, script interpreters, browsers, package
// managers, administration tools, and the occasional living-off-the-land
// binary that rules look for). With probability 'repetition' an event is
// a catalog process picked by a Zipf law of exponent 'zipf.exponent' (a
// few processes make most events, as on real machines); otherwise it is a
// process seen once: the same templates with fresh parts (temporary file
// names, GUIDs, ports, encoded arguments). Hosts and users are Zipf-picked
// from their own lists. So with the defaults about 80% of events repeat a
// command line seen before.
//
// Table options:
//
//	'events.num'       total events; the source is bounded when set
//	'repetition'       share of events that are catalog processes, 0..1
//	                   (default 0.8)
//	'catalog.size'     processes in the catalog (default 10000, at most
//	                   10000000)
//	'zipf.exponent'    exponent of the Zipf laws, above 0 (default 1.1)
//	'hosts'            distinct hosts (default 500); 'users' likewise
//	                   (default 2000)
//	'event-time.rate'  events per second of event time (default 10000):
//	                   event n happens at base-time + n / rate
//	'base-time'        time of event 0, 'yyyy-MM-dd HH:mm:ss' (default
//	                   2024-01-01 00:00:00)
//	'rows-per-second'  wall-clock rate limit of the table (default 0: none)
//	'seed'             seed of the random choices (default 0)
//	'partitions'       number of partitions (default 1, at most 1024)
//
// Invariants: event n is a function of the options and n only, so every
// partition split and every replay gives the same events; partition p of
// P holds events n = p, p+P, p+2P, ... as origin offsets 1, 2, 3, ...,
// in event-time order; a bounded table yields exactly events.num events.
package procgen

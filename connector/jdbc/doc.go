// Package jdbc is the jdbc connector for PostgreSQL and MySQL/MariaDB
// tables, as dimension tables and as sinks, with Flink's option names:
// 'url' (a JDBC URL, jdbc:postgresql://... or jdbc:mysql://...,
// translated to a Go DSN), 'table-name', 'username', 'password', 'driver'.
//
// With 'lookup.cache' = 'FULL' a table is a connector.FullSource: Load
// runs SELECT <columns> FROM <table> and the engine keeps the rows in its
// shared store, loading them again every 'lookup.full-cache.reload-interval'.
// Otherwise it is a connector.KeyLookuper: each key set gets a prepared
// SELECT ... WHERE k1 = ? AND k2 = ?, in front of which sits a per-job
// lookupcache (PARTIAL) or nothing (NONE), with 'lookup.max-retries'.
// 'connection.max-retry-timeout' (60 s) bounds connecting to the server.
//
// As a sink (Sink), a table with a PRIMARY KEY upserts +I/+U rows by the
// key (INSERT ... ON CONFLICT (k) DO UPDATE in PostgreSQL, INSERT ... ON
// DUPLICATE KEY UPDATE in MySQL) and deletes on -D rows, and so takes
// updating queries (a connector.ChangelogSink); one without appends.
// Rows are buffered and reduced by key (connector/sinkbuf:
// 'sink.buffer-flush.max-rows', 'sink.buffer-flush.interval',
// 'sink.max-retries') and written in one transaction of multi-row
// statements per batch. Exactly-once ('sink.delivery-guarantee', the
// default with a key), in a job that takes checkpoints, what a checkpoint
// holds is written once it is complete, and a restarted job writes its
// last checkpoint's changes again first: the table only ever holds the
// output of completed checkpoints. At least once, batches are written as
// the buffer fills, on the interval and at every checkpoint.
//
// Invariants: column and table names are quoted as written (PostgreSQL
// folds unquoted names to lower case: declare them as the database has
// them). Database types are checked against the declared column types on
// the first result of each statement, and before a sink's first write; a
// value that does not fit its column (an out-of-range integer, a decimal
// with too many digits, a string too long) is an error, never truncated
// (MySQL sessions that write run in strict mode). TIMESTAMP values are
// read and written in UTC (MySQL sessions are set to time_zone '+00:00').
// Sources are safe for concurrent use; a sink is written by one task.
package jdbc

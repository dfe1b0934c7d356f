// Package jdbc is the jdbc connector for dimension tables in PostgreSQL
// and MySQL/MariaDB, with Flink's option names: 'url' (a JDBC URL,
// jdbc:postgresql://... or jdbc:mysql://..., translated to a Go DSN),
// 'table-name', 'username', 'password', 'driver'.
//
// With 'lookup.cache' = 'FULL' a table is a connector.FullSource: Load
// runs SELECT <columns> FROM <table> and the engine keeps the rows in its
// shared store, loading them again every 'lookup.full-cache.reload-interval'.
// Otherwise it is a connector.KeyLookuper: each key set gets a prepared
// SELECT ... WHERE k1 = ? AND k2 = ?, in front of which sits a per-job
// lookupcache (PARTIAL) or nothing (NONE), with 'lookup.max-retries'.
// 'connection.max-retry-timeout' (60 s) bounds connecting to the server.
//
// Invariants: column and table names are quoted as written (PostgreSQL
// folds unquoted names to lower case: declare them as the database has
// them). Database types are checked against the declared column types on
// the first result of each statement; a value that does not fit its
// column (an out-of-range integer, a decimal with too many digits) is an
// error, never truncated. TIMESTAMP values are read in UTC (MySQL
// sessions are set to time_zone '+00:00'). Sources are safe for
// concurrent use.
package jdbc

// Package redis is the redis connector for dimension tables looked up by
// key (a connector.KeyLookuper) in a Redis server.
//
// A row's Redis key is 'key-prefix' followed by the values of the key
// columns joined by 'key-separator': the PRIMARY KEY columns, in their
// declared order, or without a primary key the lookup's key columns in
// table order. With 'data-type' = 'hash' (the default) HGETALL reads the
// row's columns from the fields of that name; with 'string' GET reads a
// value decoded with the table's 'format' (e.g. json), or, without a
// format, the value of the table's single non-key column. Key columns
// that the value does not carry are filled from the key. A key that does
// not exist has no rows.
//
// Invariants: a lookup by columns that do not cover the primary key is
// refused (Redis cannot search); other key columns are checked on the row
// read. Lookups go through a per-job lookupcache and are safe for
// concurrent use.
package redis

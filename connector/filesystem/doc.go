// Package filesystem implements the 'filesystem' connector: bounded sources
// that read files line by line, and sinks that write one formatted record
// per line.
//
// Table options:
//
//	'path'                     a file, or a directory (required)
//	'format'                   json, csv, raw, ... (required)
//	'<format>.<option>'        options of the format
//	'dead-letter.path'         (Sluice) file that receives malformed records;
//	                           see connector.ErrorPolicy
//	'sink.rolling-policy.*'    accepted for Flink compatibility and ignored:
//	                           a sink writes one file
//
// Source: a file is one partition; a directory is one partition per regular
// file in it (names starting with '.' or '_' are skipped, as Flink does),
// in name order. A row's origin is (partition, line number), lines counted
// from 1; empty lines are skipped except by the raw format, and formats
// may skip others (csv comment lines) or join lines (csv quoted fields
// holding line breaks, whose row then has the number of its first line).
//
// Changelog formats (debezium-json, canal-json, maxwell-json): a line
// may give several rows (an update gives -U and +U) or none, and the
// table reads as a changelog (its scan is updating). A row's origin
// offset is then the line number shifted left by 16 bits plus the row's
// number within the line (connector.ChangelogOffset), so that stateful
// operators tell the rows of one line apart.
//
// Lookup (connector.LookupFactory): a table on the dimension side of a
// lookup join is not scanned but loaded in full (every file the path
// stands for, listed again at each load, read with the table's format and
// error policy; changelog formats are refused) into the engine's shared
// store, and loaded again every 'lookup.full-cache.reload-interval' (or
// 'lookup.full-cache.periodic-reload.interval', or Sluice's
// 'refresh-interval'; default never). 'lookup.cache' may only be 'FULL'.
// Its identity, which decides which jobs share a copy, is the absolute
// path, the columns and every option.
//
// Sink: a path that is an existing directory receives a new file
// part-<n>.<format> (the first n not taken); any other path is created or
// truncated. Rows are buffered and written on Flush and Close. With an
// append-only format (json, csv, raw) only +I and +U rows can be written
// (the planner refuses an updating query; a -U or -D row fails the
// write). With a changelog format every kind is written, as the format
// encodes it (-U as a deletion, as Flink writes it), with a PRIMARY KEY
// or without: reading the file back as a changelog retracts what was
// replaced, and applying it by key (an insert replaces the key's row, a
// delete removes it) gives the query's final result too.
package filesystem

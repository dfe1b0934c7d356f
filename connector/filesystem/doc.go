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
// Sink: a path that is an existing directory receives a new file
// part-<n>.<format> (the first n not taken); any other path is created or
// truncated. Rows are buffered and written on Flush and Close. Only
// +I and +U rows can be written: the formats here are append-only, and a
// -U or -D row fails the write.
package filesystem

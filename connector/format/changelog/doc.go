// Package changelog implements the changelog formats 'debezium-json',
// 'canal-json' and 'maxwell-json': JSON envelopes around the rows of a
// database change stream, read as +I/-U/+U/-D rows and written as Flink
// writes them. The rows inside an envelope are decoded and encoded by the
// json format's Decoder and Encoder; this package only reads and writes the
// envelope.
//
// Reading (format.ChangelogDecoder): one record gives zero or more rows.
//
//	debezium-json  {"before":{..},"after":{..},"op":"c|r|u|d"}
//	               c, r (snapshot): +I after; u: -U before, +U after;
//	               d: -D before. With 'debezium-json.schema-include' the
//	               record is {"schema":..,"payload":{..}}.
//	canal-json     {"data":[{..},..],"old":[{..},..],"type":"INSERT|UPDATE|DELETE"}
//	               one row (a pair for UPDATE) per element of data; an
//	               element of old holds the changed fields only, the others
//	               are taken from data. DDL records ("isDdl": true, or type
//	               CREATE) give no rows.
//	maxwell-json   {"data":{..},"old":{..},"type":"insert|update|delete"}
//	               as canal with one row; bootstrap-insert is +I, and
//	               bootstrap-start/-complete give no rows.
//
// canal-json and maxwell-json take 'database.include' and 'table.include'
// (regular expressions matched against the whole "database" and "table"
// fields): other records give no rows.
//
// Writing: Flink does not merge -U and +U into one update, and neither do
// we: +I and +U are written as an insert, -U and -D as a delete:
//
//	debezium-json  {"before":null,"after":{..},"op":"c"}  {"before":{..},"after":null,"op":"d"}
//	canal-json     {"data":[{..}],"type":"INSERT"}         {"data":[{..}],"type":"DELETE"}
//	maxwell-json   {"data":{..},"type":"insert"}           {"data":{..},"type":"delete"}
//
// Options are the json format's (timestamp-format.standard,
// map-null-key.*, encode.*, ignore-parse-errors, which the connector's
// error policy applies) under the format's own prefix, e.g.
// 'debezium-json.timestamp-format.standard'.
//
// A malformed record is an error naming the envelope field and what was
// expected; it never panics and never gives part of its rows.
package changelog

// Package http is the http connector for dimension tables served by a web
// service: Load GETs 'url', which must answer 200 with a JSON array of
// objects, and decodes each object into a row with the json format (its
// 'json.*' options apply). The table is a connector.FullSource: the
// engine keeps the rows in its shared store and loads them again every
// 'lookup.full-cache.reload-interval' (or 'refresh-interval'). A response
// larger than 'max-response-size' (default 256 MiB; Flink's notation:
// '64 mb', '1 gb') fails the load: a declared Content-Length at once, an
// undeclared one a byte past the limit.
//
// Invariants: the response is decoded as it streams in, never held whole;
// a load either emits every row or fails (a malformed element fails it
// unless 'json.ignore-parse-errors' or 'dead-letter.path' says to skip
// it). Sources are safe for concurrent use.
package http

// Package http is the 'http' connector. Its tables are of three kinds,
// told apart by how a job uses them:
//
//   - A dimension table served by a web service (a lookup join's
//     dimension): Load GETs 'url', which must answer 200 with a JSON
//     array of objects, and decodes each object into a row with the json
//     format (its 'json.*' options apply). The table is a
//     connector.FullSource: the engine keeps the rows in its shared store
//     and loads them again every 'lookup.full-cache.reload-interval' (or
//     'refresh-interval'). A response larger than 'max-response-size'
//     (default 256 MiB; Flink's notation: '64 mb', '1 gb') fails the
//     load: a declared Content-Length at once, an undeclared one a byte
//     past the limit.
//   - A push source (a scanned table): while the job runs, a reader
//     serves an endpoint on 'source.listen' to which senders POST JSON
//     records (one object, an array of objects, or objects one a line),
//     with 'Authorization: Bearer <source.token>'.
//   - A sink: rows go to 'url' in batches ('sink.batch.mode': a JSON
//     array, newline-delimited, or one request a row), retried with
//     back-off.
//
// Invariants:
//   - Lookup: the response is decoded as it streams in, never held whole;
//     a load either emits every row or fails (a malformed element fails
//     it unless 'json.ignore-parse-errors' or 'dead-letter.path' says to
//     skip it). Sources are safe for concurrent use.
//   - Push source: a request is taken whole or not at all: a body that
//     does not split into records, or (unless 'json.ignore-parse-errors')
//     a record that does not decode, is answered 400 naming its line and
//     column, and none of its rows reaches the job. A request taken is
//     answered 200 only once its rows are safe: in a job with
//     checkpoints, once the checkpoint after its last row completed
//     (connector.Acknowledger); without, once the job has read them.
//     Whatever is unanswered when the reader closes is answered 503, so
//     that a sender that retries until 200 loses nothing (at-least-once).
//     Rows are handed to the job in the order requests were taken; their
//     origin offsets keep rising across runs of a job (the reader is a
//     connector.Resumer).
//   - Sink: batches are sent one at a time, in the order written. Flush
//     returns once every row written was answered 2xx, or is in the
//     dead-letter file ('sink.dead-letter.path'); a batch that can be
//     neither fails the sink, and every later call returns that error.
//     Messages never quote the credentials of the URL or of the headers.
package http

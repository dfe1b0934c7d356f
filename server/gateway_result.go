package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/sluicesql/sluice"
	flinkjson "github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/types"
)

const (
	// gatewayBufferRows bounds the rows a query holds for its client:
	// at that many, the query waits until the client fetches (back
	// pressure), and a page holds at most that many.
	gatewayBufferRows = 1000
	// gatewayPollWait is how long a fetch waits for a running query's
	// next row before it answers an empty page.
	gatewayPollWait = time.Second
	// gatewayQueryJob names the jobs of the gateway's queries: no
	// published job can take it (a job's name has no '$'), nor it a
	// job's.
	gatewayQueryJob = "$gateway"
)

// Operation statuses, as Flink's.
const (
	opFinished = "FINISHED"
	opError    = "ERROR"
	opCanceled = "CANCELED"
	opClosed   = "CLOSED"
)

// Result kinds and row formats, as Flink's.
const (
	resultSuccess     = "SUCCESS"
	resultWithContent = "SUCCESS_WITH_CONTENT"
	rowFormatJSON     = "JSON"
	rowFormatPlain    = "PLAIN_TEXT"
)

// gwOp is an operation of a gateway session: the result of a statement,
// fetched page by page. A page is what was buffered when it was asked
// for; the token of a page is one more than the previous page's, and the
// previous page can be asked for again (a client's retry), as in Flink.
type gwOp struct {
	id     string
	schema types.Schema
	query  bool
	kind   string
	jobID  string
	// job is a query's job, src its statement and child the session it
	// runs in; loc is the session's time zone, for TIMESTAMP_LTZ values
	// as text.
	job   *sluice.Job
	src   string
	child *sluice.Engine
	loc   *time.Location

	// fetchMu serializes the fetches and guards token, prev and encs
	// (the encoders of the columns' JSON values).
	fetchMu sync.Mutex
	token   int64
	prev    []types.Row
	encs    []*flinkjson.Encoder

	// mu guards the fields below.
	mu     sync.Mutex
	status string
	rows   []types.Row
	// ended: no row comes after those in rows; err is why a query's job
	// failed.
	ended bool
	err   error
	// ready is signalled when rows come or the query ends; room when a
	// fetch takes rows; quit is closed when the operation is cancelled
	// or closed.
	ready, room, quit chan struct{}
	stopOnce          sync.Once
}

func newOp(kind string, schema types.Schema) *gwOp {
	return &gwOp{id: newUUID(), kind: kind, schema: schema, status: opFinished, loc: time.UTC,
		ready: make(chan struct{}, 1), room: make(chan struct{}, 1), quit: make(chan struct{})}
}

// fixedOp is an operation whose rows are all known: string columns.
func fixedOp(kind string, cols []string, rows [][]string, jobID string) *gwOp {
	schema := types.Schema{}
	for _, c := range cols {
		schema.Columns = append(schema.Columns, types.Column{Name: c, Type: types.String})
	}
	op := newOp(kind, schema)
	op.jobID = jobID
	for _, r := range rows {
		vals := make([]types.Value, len(r))
		for i, v := range r {
			vals[i] = types.StringValue(v)
		}
		op.rows = append(op.rows, types.Row{Kind: types.Insert, Vals: vals})
	}
	op.ended = true
	return op
}

// runQuery starts a SELECT in a session of its own over the gateway
// session (so that what it sets stays its own), without shared sources:
// a client that stops fetching holds back this query only, never the
// published jobs that read the same table.
func (s *Server) runQuery(gs *gwSession, src string, extra map[string]string) (*gwOp, *gwFail) {
	child := gs.eng.NewSession()
	var sets string
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		sets += fmt.Sprintf("SET %s = %s;\n", sqlString(k), sqlString(extra[k]))
	}
	sets += fmt.Sprintf("SET '%s' = '%s';\nSET '%s' = 'false';\n", config.PipelineName, gatewayQueryJob, config.PipelineSharedSource)
	if _, err := child.Exec(context.Background(), "executionConfig", []byte(sets)); err != nil {
		child.Close()
		return nil, badRequest("executionConfig: %s", sluice.FormatError(err, []byte(sets)))
	}
	op := newOp(resultWithContent, types.Schema{})
	op.query, op.jobID, op.src, op.child = true, newJobID(), src, child
	if tz, ok := child.Config()[config.LocalTimeZone]; ok {
		if loc, err := config.Location(tz); err == nil {
			op.loc = loc
		}
	}
	job, schema, err := child.Query(context.Background(), gatewayFile, []byte(src), op.add)
	if err != nil {
		child.Close()
		return nil, s.sqlFail(gs, src, err)
	}
	op.job, op.schema = job, schema
	go op.watch()
	s.log.Debug("gateway query started", "session", gs.id, "operation", op.id)
	return op, nil
}

var errOpStopped = errors.New("the gateway operation was cancelled or closed")

// add buffers a row of the query for its client, waiting while the
// buffer is full.
func (op *gwOp) add(r types.Row) error {
	for {
		select {
		case <-op.quit:
			return errOpStopped
		default:
		}
		op.mu.Lock()
		if len(op.rows) < gatewayBufferRows {
			op.rows = append(op.rows, types.CopyRow(r))
			op.mu.Unlock()
			signal(op.ready)
			return nil
		}
		op.mu.Unlock()
		select {
		case <-op.room:
		case <-op.quit:
			return errOpStopped
		}
	}
}

// watch records the end of the query's job.
func (op *gwOp) watch() {
	err := op.job.Wait()
	op.mu.Lock()
	op.ended = true
	if err != nil && op.status == opFinished {
		op.err, op.status = err, opError
	}
	op.mu.Unlock()
	signal(op.ready)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (op *gwOp) currentStatus() string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.status
}

// stop cancels or closes the operation (a closed one stays so) and
// cancels its query's job, waiting for its end.
func (op *gwOp) stop(status string) {
	op.mu.Lock()
	if op.status != opClosed {
		op.status = status
	}
	op.mu.Unlock()
	op.stopOnce.Do(func() {
		close(op.quit)
		if op.job != nil {
			op.job.Cancel()
			op.job.Wait()
			op.child.Close()
		}
	})
}

// gwPage is a page of results: rows, and the token of the next page,
// or the end of the results.
type gwPage struct {
	rows []types.Row
	next int64
	eos  bool
}

// fetch returns the page of token: the rows buffered (waiting up to
// gatewayPollWait, or until ctx is done, for the first one of a running
// query), the end once the rows have ended, or the previous page again.
func (op *gwOp) fetch(ctx context.Context, token int64) (gwPage, *gwFail) {
	op.fetchMu.Lock()
	defer op.fetchMu.Unlock()
	if st := op.currentStatus(); st == opCanceled || st == opClosed {
		return gwPage{}, badRequest("Can not fetch results from the operation %s in %s status.", op.id, st)
	}
	switch {
	case token == op.token:
	case token == op.token-1:
		return gwPage{rows: op.prev, next: op.token}, nil
	case op.token == 0:
		return gwPage{}, badRequest("Expecting token to be 0, but found %d.", token)
	default:
		return gwPage{}, badRequest("Expecting token to be %d or %d, but found %d.", op.token, op.token-1, token)
	}
	rows, ended, err := op.take(ctx)
	if ended {
		if err != nil {
			return gwPage{}, &gwFail{http.StatusInternalServerError, "The query failed: " + sluice.FormatError(err, []byte(op.src))}
		}
		return gwPage{eos: true}, nil
	}
	op.token++
	op.prev = rows
	return gwPage{rows: rows, next: op.token}, nil
}

// take takes the rows buffered, waiting for one up to gatewayPollWait;
// ended reports that none will come (err: the query failed).
func (op *gwOp) take(ctx context.Context) (rows []types.Row, ended bool, err error) {
	timer := time.NewTimer(gatewayPollWait)
	defer timer.Stop()
	for {
		op.mu.Lock()
		rows, ended, err = op.rows, op.ended, op.err
		if len(rows) > 0 {
			op.rows = nil
			op.mu.Unlock()
			signal(op.room)
			return rows, false, nil
		}
		op.mu.Unlock()
		if ended {
			return nil, true, err
		}
		select {
		case <-op.ready:
		case <-timer.C:
			return nil, false, nil
		case <-ctx.Done():
			return nil, false, nil
		case <-op.quit:
			return nil, false, nil
		}
	}
}

// The body of a fetch, as Flink's: a NOT_READY page (never answered
// here: a statement has run when its operation exists) would have only
// resultType and nextResultUri.
type gwFetchBody struct {
	ResultType    string        `json:"resultType"`
	IsQueryResult bool          `json:"isQueryResult"`
	JobID         string        `json:"jobID,omitempty"`
	ResultKind    string        `json:"resultKind"`
	Results       gwResultsBody `json:"results"`
	NextResultURI string        `json:"nextResultUri,omitempty"`
}

type gwResultsBody struct {
	Columns   []gwColumn `json:"columns"`
	RowFormat string     `json:"rowFormat"`
	Data      []gwRow    `json:"data"`
}

type gwColumn struct {
	Name        string       `json:"name"`
	LogicalType *logicalType `json:"logicalType"`
	// Comment is always null; Flink's client needs the field.
	Comment *string `json:"comment"`
}

type gwRow struct {
	Kind   string `json:"kind"`
	Fields []any  `json:"fields"`
}

// body renders page in format, with next the URI of the next page ("" at
// the end).
func (op *gwOp) body(page gwPage, format, next string) (gwFetchBody, error) {
	b := gwFetchBody{ResultType: "PAYLOAD", IsQueryResult: op.query, JobID: op.jobID, ResultKind: op.kind, NextResultURI: next,
		Results: gwResultsBody{Columns: []gwColumn{}, RowFormat: format, Data: []gwRow{}}}
	if page.eos {
		b.ResultType = "EOS"
	}
	for _, c := range op.schema.Columns {
		b.Results.Columns = append(b.Results.Columns, gwColumn{Name: c.Name, LogicalType: flinkType(c.Type)})
	}
	op.fetchMu.Lock()
	defer op.fetchMu.Unlock()
	for _, r := range page.rows {
		var fields []any
		var err error
		if format == rowFormatJSON {
			fields, err = op.jsonFields(r)
		} else {
			fields = op.textFields(r)
		}
		if err != nil {
			return b, err
		}
		b.Results.Data = append(b.Results.Data, gwRow{Kind: rowKind(r.Kind), Fields: fields})
	}
	return b, nil
}

func rowKind(k types.RowKind) string {
	switch k {
	case types.UpdateBefore:
		return "UPDATE_BEFORE"
	case types.UpdateAfter:
		return "UPDATE_AFTER"
	case types.Delete:
		return "DELETE"
	}
	return "INSERT"
}

// jsonFields returns the values of r as Flink's gateway writes them in
// the JSON row format: as Flink's json format does, with ISO-8601
// timestamps. Each value is written by an encoder of a one-column row
// {"v": value}, and taken out of it. op.fetchMu must be held.
func (op *gwOp) jsonFields(r types.Row) ([]any, error) {
	if op.encs == nil {
		opts, err := flinkjson.ParseOptions("json", map[string]string{"timestamp-format.standard": "ISO-8601", "map-null-key.mode": "LITERAL"})
		if err != nil {
			return nil, err
		}
		for _, c := range op.schema.Columns {
			op.encs = append(op.encs, opts.NewEncoder(types.NewSchema(types.Column{Name: "v", Type: c.Type})))
		}
	}
	const head = `{"v":`
	out := make([]any, len(r.Vals))
	var buf []byte
	ends := make([]int, len(r.Vals))
	for i, v := range r.Vals {
		start := len(buf)
		var err error
		if buf, err = op.encs[i].Encode(buf, types.Row{Vals: []types.Value{v}}); err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(buf[start:], []byte(head)) || buf[len(buf)-1] != '}' {
			return nil, fmt.Errorf("the json format wrote %q for a value", buf[start:])
		}
		ends[i] = len(buf)
	}
	start := 0
	for i, end := range ends {
		out[i] = json.RawMessage(buf[start+len(head) : end-1])
		start = end
	}
	return out, nil
}

// textFields returns the values of r as Flink's gateway writes them in
// the PLAIN_TEXT row format: as its SQL client prints them, NULL as
// null.
func (op *gwOp) textFields(r types.Row) []any {
	out := make([]any, len(r.Vals))
	for i, v := range r.Vals {
		if v.IsNull() {
			continue
		}
		var t types.Type
		if i < len(op.schema.Columns) {
			t = op.schema.Columns[i].Type
		}
		out[i] = string(types.AppendValueIn(nil, v, t, op.loc))
	}
	return out
}

// logicalType is a type as Flink's gateway writes it (its
// LogicalTypeJsonSerializer).
type logicalType struct {
	Type                string         `json:"type"`
	Nullable            *bool          `json:"nullable,omitempty"`
	Length              *int           `json:"length,omitempty"`
	Precision           *int           `json:"precision,omitempty"`
	Scale               *int           `json:"scale,omitempty"`
	FractionalPrecision *int           `json:"fractionalPrecision,omitempty"`
	Resolution          string         `json:"resolution,omitempty"`
	ElementType         *logicalType   `json:"elementType,omitempty"`
	KeyType             *logicalType   `json:"keyType,omitempty"`
	ValueType           *logicalType   `json:"valueType,omitempty"`
	Fields              []logicalField `json:"fields,omitempty"`
}

type logicalField struct {
	Name      string       `json:"name"`
	FieldType *logicalType `json:"fieldType"`
}

// flinkRoots are the names of Flink's type roots of the simple kinds.
var flinkRoots = map[types.Kind]string{
	types.KindBoolean: "BOOLEAN", types.KindTinyInt: "TINYINT", types.KindSmallInt: "SMALLINT",
	types.KindInt: "INTEGER", types.KindBigInt: "BIGINT", types.KindFloat: "FLOAT", types.KindDouble: "DOUBLE",
	types.KindDate: "DATE", types.KindChar: "CHAR", types.KindVarChar: "VARCHAR", types.KindBinary: "BINARY",
	types.KindVarBinary: "VARBINARY", types.KindDecimal: "DECIMAL", types.KindTime: "TIME_WITHOUT_TIME_ZONE",
	types.KindTimestamp: "TIMESTAMP_WITHOUT_TIME_ZONE", types.KindTimestampLTZ: "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
	types.KindIntervalDayTime: "INTERVAL_DAY_TIME", types.KindIntervalYearMonth: "INTERVAL_YEAR_MONTH",
	types.KindArray: "ARRAY", types.KindMultiset: "MULTISET", types.KindMap: "MAP", types.KindRow: "ROW",
}

// flinkType returns t as Flink's gateway describes a type. Sluice's
// intervals carry no resolution: they are Flink's defaults, DAY(2) TO
// SECOND(6) and YEAR(2) TO MONTH.
func flinkType(t types.Type) *logicalType {
	root, ok := flinkRoots[t.Kind]
	if !ok {
		return &logicalType{Type: "NULL"}
	}
	num := func(n int) *int { return &n }
	nullable := !t.NotNull
	lt := &logicalType{Type: root, Nullable: &nullable}
	sub := func(e *types.Type) *logicalType {
		if e == nil {
			return &logicalType{Type: "NULL"}
		}
		return flinkType(*e)
	}
	switch t.Kind {
	case types.KindChar, types.KindVarChar, types.KindBinary, types.KindVarBinary:
		lt.Length = num(t.Precision)
	case types.KindDecimal:
		lt.Precision, lt.Scale = num(t.Precision), num(t.Scale)
	case types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		lt.Precision = num(t.Precision)
	case types.KindIntervalDayTime:
		lt.Precision, lt.FractionalPrecision, lt.Resolution = num(2), num(6), "DAY_TO_SECOND"
	case types.KindIntervalYearMonth:
		lt.Precision, lt.Resolution = num(2), "YEAR_TO_MONTH"
	case types.KindArray, types.KindMultiset:
		lt.ElementType = sub(t.Elem)
	case types.KindMap:
		lt.KeyType, lt.ValueType = sub(t.Elem), sub(t.Value)
	case types.KindRow:
		lt.Fields = []logicalField{}
		for _, f := range t.Fields {
			lt.Fields = append(lt.Fields, logicalField{Name: f.Name, FieldType: flinkType(f.Type)})
		}
	}
	return lt
}

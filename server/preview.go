package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/parser"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/types"
)

// Bounds of a preview.
const (
	defaultPreviewRows    = 100
	maxPreviewRows        = 10000
	defaultPreviewTimeout = 10 * time.Second
	maxPreviewTimeout     = 60 * time.Second
)

type previewRequest struct {
	SQL       string `json:"sql"`
	MaxRows   int    `json:"max_rows"`
	TimeoutMS int64  `json:"timeout_ms"`
}

type previewColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type previewRow struct {
	Kind   string `json:"kind"`
	Values []any  `json:"values"`
}

type previewEnd struct {
	Rows   int    `json:"rows"`
	Reason string `json:"reason"`
}

// previewJob names the jobs of previews; a job's name cannot have a '$'.
const previewJob = "$preview"

// Why a preview ended.
const (
	endMaxRows    = "max_rows"
	endTimeout    = "timeout"
	endFinished   = "finished"
	endClientGone = "client_gone"
)

// preview answers POST /v1/preview: the script's SELECT runs in a
// throwaway session over the server's catalog, without the server's
// state directory, and its rows stream back as server-sent events
// (columns, then a row event per row, then end or error) until max_rows
// rows, the timeout, the query's end or the client's going away, each of
// which cancels its job.
func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	var req previewRequest
	if !decode(w, r, &req, false) {
		return
	}
	switch {
	case req.MaxRows == 0:
		req.MaxRows = defaultPreviewRows
	case req.MaxRows < 0 || req.MaxRows > maxPreviewRows:
		writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("max_rows %d: use 1 to %d (default %d)", req.MaxRows, maxPreviewRows, defaultPreviewRows), nil)
		return
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	switch {
	case req.TimeoutMS == 0:
		timeout = defaultPreviewTimeout
	case req.TimeoutMS < 0 || req.TimeoutMS > maxPreviewTimeout.Milliseconds():
		writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("timeout_ms %d: use 1 to %d (default %d)", req.TimeoutMS, maxPreviewTimeout.Milliseconds(), defaultPreviewTimeout.Milliseconds()), nil)
		return
	}
	const filename = "preview.sql"
	src := []byte(req.SQL)
	if err := checkPreview(filename, src); err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		writeError(w, http.StatusServiceUnavailable, codeInternal, "the server is shutting down", nil)
		return
	}

	sess := s.engine.NewSession()
	defer sess.Close()
	// Named so that no job can take its name, nor it a job's: a job
	// started while a preview holds the name would run under another,
	// and not resume its state.
	if _, err := sess.Exec(context.Background(), "server", []byte(fmt.Sprintf("SET '%s' = '%s';", config.PipelineName, previewJob))); err != nil {
		s.internal(w, err)
		return
	}
	// The rows come from the job's sink goroutine and are written here,
	// one at a time: the handler alone writes the response. quit tells
	// the sink that nobody reads any more.
	rows := make(chan types.Row)
	quit := make(chan struct{})
	job, schema, err := sess.Query(context.WithoutCancel(r.Context()), filename, src, func(row types.Row) error {
		select {
		case rows <- types.CopyRow(row):
			return nil
		case <-quit:
			return errors.New("the preview ended")
		}
	})
	if err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	defer func() {
		job.Cancel()
		close(quit)
		job.Wait()
	}()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	// A client that stops reading without going away holds the stream no
	// longer than the preview lasts, and a little.
	rc.SetWriteDeadline(time.Now().Add(timeout + 10*time.Second))
	w.WriteHeader(http.StatusOK)
	cols := make([]previewColumn, len(schema.Columns))
	for i, c := range schema.Columns {
		cols[i] = previewColumn{Name: c.Name, Type: c.Type.String()}
	}
	send := func(event string, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			data, _ = json.Marshal(map[string]string{"message": "cannot encode the " + event + ": " + err.Error()})
			event = "error"
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("columns", map[string]any{"columns": cols}) {
		return
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	n := 0
	reason := ""
	for reason == "" {
		select {
		case row := <-rows:
			if !send("row", previewRow{Kind: row.Kind.String(), Values: jsonValues(row.Vals, schema)}) {
				reason = endClientGone
				break
			}
			if n++; n >= req.MaxRows {
				reason = endMaxRows
			}
		case <-job.Done():
			if err := job.Wait(); err != nil {
				send("error", map[string]string{"message": s.mask(req.SQL, sluice.FormatError(err, src))})
				return
			}
			reason = endFinished
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				send("error", map[string]string{"message": "the server is shutting down"})
				return
			}
		case <-timer.C:
			reason = endTimeout
		case <-r.Context().Done():
			reason = endClientGone
		}
	}
	s.log.Info("preview ended", "rows", n, "reason", reason)
	if reason != endClientGone {
		send("end", previewEnd{Rows: n, Reason: reason})
	}
}

// previewOwned are the options a preview may not set: it keeps no state
// and runs in the server's process.
var previewOwned = []string{"state.", "cluster.", config.CheckpointingInterval, config.PipelineName}

// checkPreview checks that src is a preview's script: DDL, SET and one
// SELECT, without the options that would give it state.
func checkPreview(filename string, src []byte) error {
	stmts, err := parser.ParseFile(filename, src)
	if err != nil {
		return err
	}
	file := token.NewFile(filename, src)
	var query ast.Statement
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateTable, *ast.CreateView, *ast.CreateRuleset, *ast.AlterRuleset, *ast.CreateMetricGroup, *ast.AlterMetricGroup, *ast.CreateFunction, *ast.Drop, *ast.Reset:
		case *ast.Set:
			for _, k := range previewOwned {
				if st.Key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(st.Key, k) {
					return token.NewError(file, st.Pos(), "a preview keeps no state and runs in the server: '%s' cannot be set in it", st.Key)
				}
			}
		case *ast.QueryStmt:
			if query != nil {
				at := file.Position(query.Pos())
				return token.NewError(file, st.Pos(), "a preview runs one SELECT, and the one at line %d, column %d is this preview's: preview this one on its own", at.Line, at.Column)
			}
			query = st
		default:
			return token.NewError(file, st.Pos(), "a preview's script holds DDL, SET and one SELECT: this statement has no place in it")
		}
	}
	if query == nil {
		return token.NewError(file, token.NoPos, "the script has no SELECT to preview")
	}
	return nil
}

// jsonValues returns vals as JSON values: numbers, strings, booleans and
// null; arrays as arrays; temporal values, decimals and the other kinds
// as their printed text (decimals as numbers of their exact digits).
func jsonValues(vals []types.Value, schema types.Schema) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		var t types.Type
		if i < len(schema.Columns) {
			t = schema.Columns[i].Type
		}
		out[i] = jsonValue(v, t)
	}
	return out
}

func jsonValue(v types.Value, t types.Type) any {
	switch v.Kind() {
	case types.KindNull:
		return nil
	case types.KindBoolean:
		return v.Bool()
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return v.Int()
	case types.KindFloat, types.KindDouble:
		if f := v.Float(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	case types.KindDecimal:
		return json.Number(types.FormatValue(v, t))
	case types.KindChar, types.KindVarChar:
		return v.Str()
	case types.KindBinary, types.KindVarBinary:
		return base64.StdEncoding.EncodeToString([]byte(v.Str()))
	case types.KindArray:
		elems := v.Elems()
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = jsonValue(e, types.Type{})
		}
		return out
	}
	return types.FormatValue(v, t)
}

package sluice

import (
	"context"
	"fmt"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/parser"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/types"
)

// RowFunc receives the rows of a query that Query runs: one call per
// row, in the order the job writes them, from one goroutine at a time.
// The row and its values are valid only during the call (copy what is
// kept). An error fails the job with it.
type RowFunc func(r types.Row) error

// Query executes src, a script of DDL, SET and one SELECT, as Exec does,
// but the SELECT's rows go to rows instead of Options.Stdout. It returns
// the SELECT's job, running, and the columns of its result (time
// attributes stripped, as the printed result has them). The job keeps
// its state in memory of its own, dropped at its end, whatever the
// session's state options: it resumes nothing and leaves nothing behind. Any other
// statement (INSERT, a statement set, a second SELECT, SHOW, EXPLAIN)
// is an error positioned in src, reported before anything runs; an error
// in a statement after the SELECT cancels its job. The job runs until
// its inputs end or it is stopped or cancelled; cancelling ctx cancels
// it.
func (e *Engine) Query(ctx context.Context, filename string, src []byte, rows RowFunc) (*Job, types.Schema, error) {
	stmts, err := parser.ParseFile(filename, src)
	if err != nil {
		return nil, types.Schema{}, err
	}
	file := token.NewFile(filename, src)
	var query *ast.QueryStmt
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.CreateTable, *ast.CreateView, *ast.CreateRuleset, *ast.AlterRuleset, *ast.CreateMetricGroup, *ast.AlterMetricGroup, *ast.CreateFunction, *ast.Drop, *ast.Set, *ast.Reset:
		case *ast.QueryStmt:
			if query != nil {
				at := file.Position(query.Pos())
				return nil, types.Schema{}, token.NewError(file, st.Pos(), "a query script runs one SELECT, and the one at line %d, column %d is its own: run this one on its own", at.Line, at.Column)
			}
			query = st
		default:
			return nil, types.Schema{}, token.NewError(file, st.Pos(), "a query script holds DDL, SET and one SELECT: this statement has no place in it")
		}
	}
	if query == nil {
		return nil, types.Schema{}, token.NewError(file, token.NoPos, "the script has no SELECT")
	}
	var job *Job
	var schema types.Schema
	for _, st := range stmts {
		if st != query {
			if _, err := e.execStmt(ctx, file, st); err != nil {
				if job != nil {
					job.Cancel()
					job.Wait()
				}
				return nil, types.Schema{}, err
			}
			continue
		}
		name, sinks, err := e.jobSinks(e.planner(file), st)
		if err != nil {
			return nil, types.Schema{}, err
		}
		schema = sinks[0].Table.Schema
		job, err = e.start(ctx, name, startHooks{
			sinks: map[*plan.Sink]connector.Sink{sinks[0]: &funcSink{rows: rows}},
			state: state.NewMemory(),
		}, sinks...)
		if err != nil {
			return nil, types.Schema{}, startError(file, st, err)
		}
	}
	return job, schema, nil
}

// funcSink hands the rows written to it to a RowFunc. A job writes a
// sink from one task at a time.
type funcSink struct {
	rows RowFunc
}

// Write implements connector.Sink.
func (s *funcSink) Write(_ context.Context, b *types.Batch) error {
	for _, r := range b.Rows {
		if err := s.rows(r); err != nil {
			return fmt.Errorf("the query's receiver: %w", err)
		}
	}
	return nil
}

// Flush implements connector.Sink; nothing is buffered.
func (s *funcSink) Flush(context.Context) error { return nil }

// Close implements connector.Sink.
func (s *funcSink) Close() error { return nil }

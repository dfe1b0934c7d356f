package sluice

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/physical"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/parser"
	"github.com/sluicesql/sluice/sql/token"
	"github.com/sluicesql/sluice/state"
	"github.com/sluicesql/sluice/state/kafkalog"
)

// JobPlan is the job a script would start, planned and built but not run:
// what a service compares with the job it runs before it replaces it (see
// Engine.Plan and state.Compare).
type JobPlan struct {
	// Name is the job's name, under which its state is saved:
	// 'pipeline.name', or the default of its statement
	// (insert-into-<sink>, statement-set, select).
	Name string
	// Explain is the job's plan as EXPLAIN prints it.
	Explain string
	// Manifest lists the job's sources, stateful operators and stateful
	// sinks by the IDs their state is kept under.
	Manifest state.Manifest
	// Config holds the session options the job would start with: the
	// engine's, with the script's SET statements before the job's
	// statement applied.
	Config map[string]string
}

// Plan plans the job that the script src would start, without starting
// it: the script's DDL and SET statements run in a session of their own
// (see NewSession), which the engine forgets once Plan returns, and its
// one INSERT, statement set or SELECT is planned and built into the graph
// it would run, whose connectors are released unused. SHOW, DESCRIBE and
// EXPLAIN statements are skipped. Functions are the engine's: a CREATE
// FUNCTION or DROP FUNCTION in src takes effect for the whole engine, as
// it would when the script runs.
//
// Errors are positioned in src as Exec's are. A script with no job
// statement, or more than one (put several INSERTs in one statement
// set), is refused. Cluster mode ('cluster.group-id') is not supported.
func (e *Engine) Plan(filename string, src []byte) (*JobPlan, error) {
	stmts, err := parser.ParseFile(filename, src)
	if err != nil {
		return nil, err
	}
	file := token.NewFile(filename, src)
	s := e.NewSession()
	defer s.Close()
	var (
		jp    *JobPlan
		first ast.Statement
	)
	for _, st := range stmts {
		switch st.(type) {
		case *ast.Show, *ast.Describe, *ast.Explain:
			continue
		case *ast.Insert, *ast.StatementSet, *ast.QueryStmt:
			if first != nil {
				at := file.Position(first.Pos())
				return nil, token.NewError(file, st.Pos(),
					"the script starts a second job (the first is at line %d, column %d): a job's script holds one INSERT, "+
						"statement set or SELECT; put several INSERTs in one statement set (EXECUTE STATEMENT SET BEGIN ... END)",
					at.Line, at.Column)
			}
			first = st
			if jp, err = s.planJob(file, st); err != nil {
				return nil, err
			}
		default:
			if _, err := s.execStmt(context.Background(), file, st); err != nil {
				return nil, err
			}
		}
	}
	if jp == nil {
		return nil, fmt.Errorf("%s: the script starts no job: it holds no INSERT, statement set or SELECT", filename)
	}
	return jp, nil
}

// planJob plans and builds the job of statement st as the session's
// options now say.
func (e *Engine) planJob(file *token.File, st ast.Statement) (*JobPlan, error) {
	p := e.planner(file)
	name, sinks, err := e.jobSinks(p, st)
	if err != nil {
		return nil, err
	}
	cfg := e.Config()
	if n := cfg[config.PipelineName]; n != "" {
		name = n
	}
	if cfg[config.ClusterGroupID] != "" {
		return nil, token.NewError(file, st.Pos(), "cannot plan the job: planning a job of cluster mode ('cluster.group-id') is not supported")
	}
	var text strings.Builder
	for _, s := range sinks {
		if _, ok := st.(*ast.QueryStmt); ok {
			text.WriteString(plan.Format(s.Input))
		} else {
			text.WriteString(plan.Format(s))
		}
	}
	if _, ok := st.(*ast.StatementSet); ok {
		filters, err := e.explainFilters(sinks)
		if err != nil {
			return nil, startError(file, st, err)
		}
		text.WriteString(filters)
	}
	env, err := e.jobEnv(cfg, name)
	if err != nil {
		return nil, startError(file, st, err)
	}
	switch {
	case cfg[config.StateBackend] == "kafka":
		// Exactly-once Kafka sinks would write into the transaction of
		// the job's state backend: a client that opens none stands in
		// for it (the sinks only look their topic up with it).
		brokers, sec, err := stateKafka(cfg)
		if err != nil {
			return nil, startError(file, st, err)
		}
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, sec.Opts...)...)
		if err != nil {
			return nil, startError(file, st, err)
		}
		defer cl.Close()
		env.ConnEnv.KafkaTxn = cl
	case cfg[config.StateDir] != "":
		env.ConnEnv.DurableState = true
	}
	m, err := physical.Manifest(env, sinks...)
	if err != nil {
		return nil, startError(file, st, e.positionTableError(err))
	}
	return &JobPlan{Name: name, Explain: text.String(), Manifest: m, Config: cfg}, nil
}

// SavedManifest returns the manifest saved with the state of job in the
// state backend that the session options cfg name ('state.dir', or
// 'state.backend' = 'kafka' with its options; nil: this session's
// options), and whether there is one. With a JobPlan p,
// SavedManifest(ctx, p.Name, p.Config) and state.Compare tell what
// starting p would keep of the state there.
//
// It may be called while the job runs: the Kafka backend is read without
// taking over the job's transactional ID, up to its last committed
// checkpoint.
func (e *Engine) SavedManifest(ctx context.Context, job string, cfg map[string]string) (state.Manifest, bool, error) {
	if cfg == nil {
		cfg = e.Config()
	}
	var b state.Backend
	switch kind := cfg[config.StateBackend]; kind {
	case "", "memory", "local":
		lb, err := e.localBackend(cfg)
		if err != nil {
			return state.Manifest{}, false, err
		}
		b = lb
	case "kafka":
		brokers, sec, err := stateKafka(cfg)
		if err != nil {
			return state.Manifest{}, false, err
		}
		kb, err := kafkalog.OpenReadOnly(ctx, kafkalog.Options{
			Bootstrap:  brokers,
			Topic:      cmpOr(cfg[config.StateKafkaTopic], "sluice-state-"+job),
			ClientOpts: sec.Opts,
			Logf:       e.logf,
		})
		if errors.Is(err, kafkalog.ErrNoChangelog) {
			return state.Manifest{}, false, nil
		}
		if err != nil {
			return state.Manifest{}, false, sec.Classify(err)
		}
		defer kb.Close()
		b = kb
	default:
		return state.Manifest{}, false, fmt.Errorf("'state.backend' = '%s' is not supported: use memory, local (with 'state.dir') or kafka", kind)
	}
	return state.LoadManifest(b, job)
}

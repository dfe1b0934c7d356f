package physical

import (
	"context"
	"fmt"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/lookup"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/types"
)

// lookup builds a lookup join: an operator chained onto its input's stage
// (each row is looked up where it is; nothing is re-keyed). Each task
// opens the dimension when it starts and closes it when it ends; a table
// loaded in full is shared through env.Dims by every task and job that
// declares it, and loaded once per key set.
func (b *builder) lookup(n *plan.LookupJoin) (*pipe, error) {
	p, err := b.build(n.Input)
	if err != nil {
		return nil, err
	}
	f, err := b.env.Connectors.Lookup(n.Table.Options["connector"])
	if err != nil {
		return nil, &TableError{Table: n.Table.Name, HintAt: n.HintAt, Err: err}
	}
	lf, ok := f.(connector.LookupFactory)
	if !ok {
		return nil, &TableError{Table: n.Table.Name, HintAt: n.HintAt, Err: fmt.Errorf("connector '%s' cannot be looked up", f.Name())}
	}
	// Open one now so that bad options fail before the job starts.
	probe, err := lf.CreateLookup(n.Table, b.env.ConnEnv)
	if err != nil {
		return nil, &TableError{Table: n.Table.Name, HintAt: n.HintAt, Err: fmt.Errorf("table %s: %w", n.Table.Name, err)}
	}
	switch probe.(type) {
	case connector.FullSource, connector.KeyLookuper:
	default:
		probe.Close()
		return nil, &TableError{Table: n.Table.Name, HintAt: n.HintAt, Err: fmt.Errorf("connector '%s' opened table %s for lookups as neither a full source nor a key lookuper", f.Name(), n.Table.Name)}
	}
	if err := probe.Close(); err != nil {
		return nil, &TableError{Table: n.Table.Name, HintAt: n.HintAt, Err: err}
	}

	tbl, connEnv, dims := n.Table, b.env.ConnEnv, b.env.Dims
	colTypes := make([]types.Type, tbl.Schema.Len())
	for i, c := range tbl.Schema.Columns {
		colTypes[i] = c.Type
	}
	keyCols := append([]int(nil), n.Keys...)
	open := func(ctx context.Context) (lookup.Dim, error) {
		src, err := lf.CreateLookup(tbl, connEnv)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", tbl.Name, err)
		}
		switch s := src.(type) {
		case connector.FullSource:
			h, err := dims.Acquire(ctx, s, colTypes, keyCols)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", tbl.Name, err)
			}
			return lookup.Shared{H: h}, nil
		case connector.KeyLookuper:
			return &lookup.Keyed{L: s, KeyCols: keyCols}, nil
		}
		src.Close()
		return nil, fmt.Errorf("table %s: not a lookup source", tbl.Name)
	}
	keyExprs, residual, env := n.KeyExprs, n.Residual, b.env.Expr
	left, width := n.Kind == plan.LeftJoin, tbl.Schema.Len()
	p.ops = append(p.ops, func(task int, next exec.Operator) (exec.Operator, error) {
		cfg := lookup.Config{Left: left, DimWidth: width, Open: open, Next: next}
		for _, k := range keyExprs {
			ev, err := expr.Compile(k, env)
			if err != nil {
				return nil, err
			}
			cfg.Key = append(cfg.Key, exec.RowFunc(ev))
		}
		if residual != nil {
			pred, err := expr.CompilePredicate(residual, env)
			if err != nil {
				return nil, err
			}
			cfg.Residual = exec.RowPredicate(pred)
		}
		return lookup.New(cfg)
	})
	return p, nil
}

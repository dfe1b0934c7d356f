package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// The options of a table used as the dimension side of a lookup join.
const (
	// reloadIntervalOption is how often the table is loaded again
	// (Flink's name in the lookup join proposal); refreshIntervalOption
	// and periodicReloadOption say the same.
	reloadIntervalOption  = "lookup.full-cache.reload-interval"
	refreshIntervalOption = "refresh-interval"
	periodicReloadOption  = "lookup.full-cache.periodic-reload.interval"
	// cacheOption is Flink's cache kind; a file is always loaded in full.
	cacheOption = "lookup.cache"
)

var lookupOptions = []string{reloadIntervalOption, refreshIntervalOption, periodicReloadOption, cacheOption}

// CreateLookup implements connector.LookupFactory: a file (or directory)
// is a dimension table loaded in full, with the format it is scanned with.
func (Factory) CreateLookup(t connector.Table, env connector.Env) (connector.LookupSource, error) {
	c, err := parseConfig(t, env)
	if err != nil {
		return nil, err
	}
	if connector.FormatIsChangelog(t, env, "format") {
		return nil, fmt.Errorf("format '%s' is a changelog format; a dimension table is read with an append-only format (json, csv)", c.fmtName)
	}
	if _, err := c.format.NewDecoder(t.Schema, c.fmtOpts); err != nil {
		return nil, err
	}
	if v := t.Options[cacheOption]; v != "" && !strings.EqualFold(v, "FULL") {
		return nil, fmt.Errorf("option '%s' = '%s': a filesystem table is loaded in full ('FULL')", cacheOption, v)
	}
	var every time.Duration
	for _, k := range []string{reloadIntervalOption, periodicReloadOption, refreshIntervalOption} {
		if _, ok := t.Options[k]; !ok {
			continue
		}
		if every, err = t.Options.Duration(k, 0); err != nil {
			return nil, err
		}
		if every < 0 {
			return nil, fmt.Errorf("option '%s' must not be negative", k)
		}
		break
	}
	if _, err := listFiles(c.path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(c.path)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve path: %w", err)
	}
	return &lookupSource{table: t, env: env, every: every, id: identity(abs, t)}, nil
}

// identity names what a lookup source loads: the connector, the absolute
// path, the columns and every option (the format and its options
// included), so that two tables share a copy only when they read the same
// data the same way.
func identity(abs string, t connector.Table) string {
	var b strings.Builder
	b.WriteString("filesystem ")
	b.WriteString(abs)
	b.WriteString(" (")
	for i, c := range t.Schema.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name + " " + c.Type.String())
	}
	b.WriteString(")")
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		if k != "path" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, t.Options[k])
	}
	return b.String()
}

// lookupSource is a filesystem table loaded in full for lookups.
type lookupSource struct {
	table connector.Table
	env   connector.Env
	every time.Duration
	id    string
}

// Load implements connector.FullSource: it reads every file the path
// stands for now (a directory is listed again at each load) with the
// table's format and error policy.
func (s *lookupSource) Load(ctx context.Context, emit func(row []types.Value) error) error {
	src, err := Factory{}.CreateSource(s.table, s.env)
	if err != nil {
		return err
	}
	b := types.NewBatch(1024, s.table.Schema.Len())
	for p := range src.Partitions() {
		r, err := src.Open(ctx, p)
		if err != nil {
			return err
		}
		for {
			b.Reset()
			err := r.Read(ctx, b, 1024)
			if err != nil && !errors.Is(err, io.EOF) {
				r.Close()
				return err
			}
			for i := range b.Rows {
				if eerr := emit(b.Rows[i].Vals); eerr != nil {
					r.Close()
					return eerr
				}
			}
			if err != nil { // io.EOF
				break
			}
		}
		if err := r.Close(); err != nil {
			return err
		}
	}
	return nil
}

// ReloadInterval implements connector.FullSource.
func (s *lookupSource) ReloadInterval() time.Duration { return s.every }

// Identity implements connector.FullSource.
func (s *lookupSource) Identity() string { return s.id }

// Close implements connector.LookupSource; a source holds nothing open
// between loads.
func (s *lookupSource) Close() error { return nil }

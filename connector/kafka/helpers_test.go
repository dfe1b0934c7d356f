package kafka

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/changelog"
	"github.com/sluicesql/sluice/connector/format/csv"
	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/connector/format/raw"
	"github.com/sluicesql/sluice/types"
)

func env(t testing.TB) connector.Env {
	t.Helper()
	f := format.NewRegistry()
	for _, x := range append([]format.Factory{json.New(), csv.New(), raw.New()}, changelog.Formats()...) {
		if err := f.Register(x); err != nil {
			t.Fatal(err)
		}
	}
	return connector.Env{Formats: f}
}

func registry() *connector.Registry {
	reg := connector.NewRegistry()
	reg.Register(New())
	reg.Register(NewUpsert())
	return reg
}

// table returns a table over topic at bootstrap with the given options
// added to the defaults (kafka connector, json format).
func table(name string, schema types.Schema, bootstrap, topic string, opts connector.Options) connector.Table {
	o := connector.Options{
		"connector":                    "kafka",
		"topic":                        topic,
		"properties.bootstrap.servers": bootstrap,
	}
	if _, ok := opts["value.format"]; !ok {
		o["format"] = "json"
	}
	for k, v := range opts {
		o[k] = v
	}
	return connector.Table{Name: name, Schema: schema, Options: o}
}

func newSource(t testing.TB, tbl connector.Table) connector.Source {
	t.Helper()
	s, err := registry().Source(tbl, env(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newSink(t testing.TB, tbl connector.Table) *Sink {
	t.Helper()
	s, err := registry().Sink(tbl, env(t))
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Sink)
}

// readToEnd reads partition p of a bounded source until io.EOF and
// returns its rows and the first other error.
func readToEnd(t testing.TB, s connector.Source, p int) ([]types.Row, connector.Reader, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := s.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for {
		b := types.NewBatch(8, 8)
		err := r.Read(ctx, b, 3)
		for _, row := range b.Rows {
			rows = append(rows, types.CopyRow(row))
		}
		if errors.Is(err, io.EOF) {
			return rows, r, nil
		}
		if err != nil {
			return rows, r, err
		}
	}
}

// readAll reads every partition of a bounded source to its end.
func readAll(t testing.TB, s connector.Source) []types.Row {
	t.Helper()
	var all []types.Row
	for p := range s.Partitions() {
		rows, r, err := readToEnd(t, s, p)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

// readN reads from r until it has n rows, failing after a generous
// deadline; for unbounded sources.
func readN(t testing.TB, r connector.Reader, n int) []types.Row {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rows []types.Row
	for len(rows) < n {
		b := types.NewBatch(8, 8)
		if err := r.Read(ctx, b, n-len(rows)); err != nil {
			t.Fatalf("after %d of %d rows: %v", len(rows), n, err)
		}
		for _, row := range b.Rows {
			rows = append(rows, types.CopyRow(row))
		}
	}
	return rows
}

func record(key, value string) *kgo.Record {
	r := &kgo.Record{Value: []byte(value)}
	if key != "" {
		r.Key = []byte(key)
	}
	return r
}

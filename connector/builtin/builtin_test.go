package builtin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

// TestPipeline reads a datagen table, writes it through a json file and
// prints what reads back: the built-in pieces working together.
func TestPipeline(t *testing.T) {
	c, f := connector.NewRegistry(), format.NewRegistry()
	if err := Register(c, f); err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !reflect.DeepEqual(got, []string{"blackhole", "datagen", "filesystem", "http", "jdbc", "kafka", "mqtt", "nats", "nexmark", "print", "procgen", "rabbitmq", "redis", "rocketmq", "upsert-kafka"}) {
		t.Fatalf("connectors = %v", got)
	}
	if err := Register(connector.NewRegistry(), f); err == nil {
		t.Fatal("registering a format twice must fail")
	}
	var out bytes.Buffer
	env := connector.Env{Formats: f, Stdout: &out, Now: func() int64 { return 1586937900000000 }}
	schema := types.NewSchema(
		types.Column{Name: "id", Type: types.BigInt},
		types.Column{Name: "ts", Type: types.Timestamp(3)},
	)
	ctx := context.Background()
	copyAll := func(src connector.Source, dst connector.Sink) {
		t.Helper()
		for p := range src.Partitions() {
			r, err := src.Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			b := types.NewBatch(16, 2)
			for {
				b.Reset()
				err := r.Read(ctx, b, 16)
				if werr := dst.Write(ctx, b); werr != nil {
					t.Fatal(werr)
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			r.Close()
		}
		if err := dst.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "gen.jsonl")
	gen, err := c.Source(connector.Table{Name: "gen", Schema: schema, Options: connector.Options{
		"connector": "datagen", "fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "3"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	file, err := c.Sink(connector.Table{Name: "file", Schema: schema, Options: connector.Options{
		"connector": "filesystem", "path": path, "format": "json"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	copyAll(gen, file)
	if data, _ := os.ReadFile(path); string(data) != `{"id":1,"ts":"2020-04-15 08:05:00"}`+"\n"+
		`{"id":2,"ts":"2020-04-15 08:05:00"}`+"\n"+`{"id":3,"ts":"2020-04-15 08:05:00"}`+"\n" {
		t.Fatalf("file:\n%s", data)
	}
	back, err := c.Source(connector.Table{Name: "back", Schema: schema, Options: connector.Options{
		"connector": "filesystem", "path": path, "format": "json"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := c.Sink(connector.Table{Name: "out", Schema: schema, Options: connector.Options{"connector": "print"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	copyAll(back, sink)
	want := "+I[1, 2020-04-15 08:05:00.000]\n+I[2, 2020-04-15 08:05:00.000]\n+I[3, 2020-04-15 08:05:00.000]\n"
	if out.String() != want {
		t.Fatalf("printed:\n%s", out.String())
	}
}

// TestLookupOnly checks that the dimension connectors are lookup sources
// and that scanning one (or writing an http one) says why it cannot be
// done.
func TestLookupOnly(t *testing.T) {
	c, f := connector.NewRegistry(), format.NewRegistry()
	if err := Register(c, f); err != nil {
		t.Fatal(err)
	}
	// http is a lookup source too, and also a push source and a sink.
	if fac, _ := c.Lookup("http"); fac == nil {
		t.Error("no http connector")
	} else if _, ok := fac.(connector.LookupFactory); !ok {
		t.Error("http is not a LookupFactory")
	}
	for _, name := range []string{"jdbc", "redis"} {
		fac, err := c.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fac.(connector.LookupFactory); !ok {
			t.Errorf("%s is not a LookupFactory", name)
		}
		tbl := connector.Table{Name: "d", Options: connector.Options{"connector": name}}
		if _, err := c.Source(tbl, connector.Env{Formats: f}); err == nil || !strings.Contains(err.Error(), "read only by a lookup join") {
			t.Errorf("%s as a source: %v", name, err)
		}
		_, err = c.Sink(tbl, connector.Env{Formats: f})
		if name != "http" { // jdbc and redis tables are sinks too
			if _, ok := fac.(connector.SinkFactory); !ok || err == nil || strings.Contains(err.Error(), "read only by a lookup join") {
				t.Errorf("%s as a sink: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "read only by a lookup join") {
			t.Errorf("%s as a sink: %v", name, err)
		}
	}
}

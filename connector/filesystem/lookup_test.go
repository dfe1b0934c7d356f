package filesystem

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

func lookupTable(dir string, opts connector.Options) connector.Table {
	o := connector.Options{"connector": "filesystem", "path": dir, "format": "csv"}
	for k, v := range opts {
		o[k] = v
	}
	return connector.Table{Name: "dim", Options: o, Schema: types.NewSchema(
		types.Column{Name: "k", Type: types.String},
		types.Column{Name: "v", Type: types.Int},
	)}
}

func TestLookupSource(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.csv"), "x,1\ny,2\n")
	write(t, filepath.Join(dir, "b.csv"), "z,3\n")
	var _ connector.LookupFactory = Factory{}
	ls, err := Factory{}.CreateLookup(lookupTable(dir, connector.Options{"refresh-interval": "30 s"}), env(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	fs := ls.(connector.FullSource)
	if got := fs.ReloadInterval(); got != 30*time.Second {
		t.Errorf("reload interval %v", got)
	}
	load := func() string {
		t.Helper()
		var rows []string
		err := fs.Load(context.Background(), func(row []types.Value) error {
			rows = append(rows, row[0].Str()+"="+types.FormatValue(row[1], types.Int))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(rows, " ")
	}
	if got := load(); got != "x=1 y=2 z=3" {
		t.Errorf("first load: %s", got)
	}
	// A directory is listed again at each load.
	write(t, filepath.Join(dir, "c.csv"), "w,4\n")
	if err := os.Remove(filepath.Join(dir, "a.csv")); err != nil {
		t.Fatal(err)
	}
	if got := load(); got != "z=3 w=4" {
		t.Errorf("second load: %s", got)
	}
	// A malformed record fails the load, as it fails a scan.
	write(t, filepath.Join(dir, "b.csv"), "z,notanumber\n")
	if err := fs.Load(context.Background(), func([]types.Value) error { return nil }); err == nil {
		t.Error("a malformed record did not fail the load")
	}
}

func TestLookupIdentityAndOptions(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "d.csv"), "x,1\n")
	id := func(opts connector.Options) string {
		t.Helper()
		ls, err := Factory{}.CreateLookup(lookupTable(dir, opts), env(t))
		if err != nil {
			t.Fatal(err)
		}
		return ls.(connector.FullSource).Identity()
	}
	base := id(nil)
	if id(nil) != base {
		t.Error("one declaration, two identities")
	}
	if id(connector.Options{"csv.field-delimiter": ";"}) == base {
		t.Error("another format option, same identity")
	}
	rel, err := Factory{}.CreateLookup(lookupTable(dir, nil), env(t))
	if err != nil {
		t.Fatal(err)
	}
	if ri := rel.(connector.FullSource).ReloadInterval(); ri != 0 {
		t.Errorf("default reload interval %v, want 0 (never)", ri)
	}
	for _, c := range []struct {
		opts connector.Options
		err  string
	}{
		{connector.Options{"lookup.full-cache.reload-interval": "soon"}, "lookup.full-cache.reload-interval"},
		{connector.Options{"lookup.cache": "PARTIAL"}, "FULL"},
		{connector.Options{"format": "debezium-json"}, "changelog format"},
		{connector.Options{"lookup.reload": "1 s"}, "lookup.reload"},
	} {
		_, err := Factory{}.CreateLookup(lookupTable(dir, c.opts), env(t))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("options %v: error %v, want one about %s", c.opts, err, c.err)
		}
	}
}

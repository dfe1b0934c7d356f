package blackhole

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

func TestBlackhole(t *testing.T) {
	reg := connector.NewRegistry()
	if err := reg.Register(New()); err != nil {
		t.Fatal(err)
	}
	tbl := connector.Table{Name: "sink", Schema: types.NewSchema(types.Column{Name: "a", Type: types.Int}),
		Options: connector.Options{"connector": "blackhole"}}
	s, err := reg.Sink(tbl, connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	b := types.NewBatch(4, 1)
	for i := range 3 {
		b.AddRow(types.Insert, types.NoOrigin, 1)[0] = types.Int32Value(int32(i))
	}
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.(*Sink).Rows(); n != 3 {
		t.Fatalf("rows = %d, want 3", n)
	}
	if _, err := reg.Source(tbl, connector.Env{}); err == nil || !strings.Contains(err.Error(), "sink only") {
		t.Fatalf("source: err = %v", err)
	}
	tbl.Options["conector"] = "x"
	if _, err := reg.Sink(tbl, connector.Env{}); err == nil || !strings.Contains(err.Error(), `did you mean "connector"`) {
		t.Fatalf("unknown option: err = %v", err)
	}
}

package physical

import (
	"slices"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/expr"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/types"
)

// shareScans groups the scans that read the same rows, whether they share
// their parts (as the scans of one table that the planner bound once do)
// or hold equal copies of them, and keeps apart those that differ in
// anything scanKey names.
func TestShareScansGroups(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.String}, {Name: "v", Type: types.Int}}
	base := &plan.Scan{
		Table: connector.Table{Name: "events", Schema: types.Schema{Columns: cols},
			Options: connector.Options{"connector": "datagen"}},
		Out:         types.Schema{Columns: cols},
		Computed:    []expr.Node{&expr.Column{Index: 0, Name: "k", T: types.String}, &expr.Column{Index: 1, Name: "v", T: types.Int}},
		RowtimeCol:  -1,
		ProctimeCol: -1,
	}
	shared := *base // the parts themselves
	equal := *base  // equal copies of them
	equal.Table.Options = connector.Options{"connector": "datagen"}
	equal.Table.Schema.Columns = slices.Clone(cols)
	equal.Out.Columns = slices.Clone(cols)
	equal.Computed = []expr.Node{&expr.Column{Index: 0, Name: "k", T: types.String}, &expr.Column{Index: 1, Name: "v", T: types.Int}}
	otherOption := *base
	otherOption.Table.Options = connector.Options{"connector": "datagen", "rows-per-second": "5"}
	otherIdle := *base
	otherIdle.IdleTimeoutMillis = 1000
	otherWatermark := *base
	otherWatermark.Watermark = &expr.Column{Index: 1, Name: "v", T: types.Int}
	fewerColumns := *base
	fewerColumns.Out.Columns = cols[:1]
	fewerColumns.Computed = base.Computed[:1]

	scans := []*plan.Scan{base, &shared, &equal, &otherOption, &otherIdle, &otherWatermark, &fewerColumns,
		// Twice each, so that each forms a group of its own.
		new(plan.Scan), new(plan.Scan), new(plan.Scan), new(plan.Scan)}
	*scans[7], *scans[8], *scans[9], *scans[10] = otherOption, otherIdle, otherWatermark, fewerColumns
	var sinks []*plan.Sink
	for _, s := range scans {
		sinks = append(sinks, &plan.Sink{Input: s})
	}
	b := &builder{}
	b.shareScans(sinks)
	group := func(i int) *scanGroup {
		g := b.shared[scans[i]]
		if g == nil {
			t.Fatalf("scan %d shares no source", i)
		}
		return g
	}
	if group(0) != group(1) || group(0) != group(2) {
		t.Error("scans with shared or equal parts read apart")
	}
	for i := 3; i <= 6; i++ {
		if group(i) == group(0) {
			t.Errorf("scan %d shares the source of a scan that reads other rows", i)
		}
		if group(i) != group(i+4) {
			t.Errorf("the two scans like scan %d read apart", i)
		}
	}
}

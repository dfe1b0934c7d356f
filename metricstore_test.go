package sluice_test

import (
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/metricstore"
	"github.com/sluicesql/sluice/types"
)

// An engine's metric store is its sessions' too, and closing the engine
// leaves it to its owner.
func TestEngineMetricStore(t *testing.T) {
	e, err := sluice.Open(sluice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.MetricStore() != nil {
		t.Fatal("a new engine has a metric store")
	}
	st, err := metricstore.Open(metricstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess := e.NewSession()
	e.SetMetricStore(st)
	if sess.MetricStore() != st || e.NewSession().MetricStore() != st {
		t.Error("a session does not see the engine's metric store")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Define(metricstore.Group{Name: "g", Metrics: []metricstore.Metric{{Name: "n", Type: types.BigInt}}}); err != nil {
		t.Errorf("the store was closed with the engine: %v", err)
	}
}

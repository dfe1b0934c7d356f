package agg

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	for _, n := range []string{"COUNT", "SUM", "SUM0", "AVG", "MIN", "MAX", "FIRST_VALUE", "LAST_VALUE",
		"LISTAGG", "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "STDDEV", "VARIANCE",
		"BOOL_AND", "BOOL_OR", "COLLECT"} {
		if !slices.Contains(r.Names(), n) {
			t.Errorf("%s missing from Names", n)
		}
	}
	f, err := r.Lookup("stddev")
	if err != nil || f.Name() != "STDDEV_SAMP" {
		t.Fatalf("Lookup(stddev) = %v, %v", f, err)
	}
	if !r.Has("stddev") || !r.Has("COUNT") || r.Has("COUNTT") || r.Has("") {
		t.Error("Has disagrees with Lookup")
	}
	_, err = r.Lookup("COUNTT")
	if err == nil || !strings.Contains(err.Error(), `did you mean "COUNT"`) {
		t.Fatalf("Lookup(COUNTT) error = %v", err)
	}
	if err := r.Register(countFunc{}); err == nil {
		t.Fatal("registering COUNT twice succeeded")
	}
	// Registries are independent values.
	uf, err := NewUserFunc(UserAggregate{Name: "mine", Result: types.Int, New: func() UserAccumulator { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(uf); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRegistry().Lookup("MINE"); err == nil {
		t.Fatal("user function leaked into another registry")
	}
	if _, err := r.Lookup("mine"); err != nil {
		t.Fatal(err)
	}
}

func TestResultTypeErrors(t *testing.T) {
	r := NewRegistry()
	for _, tc := range []struct {
		name string
		args []types.Type
		want string
	}{
		{"AVG", []types.Type{types.String}, "cannot apply AVG to (STRING): want a numeric argument"},
		{"MAX", nil, "cannot apply MAX to (): want one argument"},
		{"VAR_POP", []types.Type{types.Boolean}, "cannot apply VAR_POP to (BOOLEAN): want a numeric argument"},
	} {
		f, err := r.Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.ResultType(tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

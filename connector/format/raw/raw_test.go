package raw

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestRaw(t *testing.T) {
	for _, typ := range []types.Type{types.String, types.Bytes} {
		schema := types.NewSchema(types.Column{Name: "line", Type: typ})
		dec, err := New().NewDecoder(schema, map[string]string{"charset": "UTF-8"})
		if err != nil {
			t.Fatal(err)
		}
		enc, err := New().NewEncoder(schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		buf := []byte("any {text}, \x00 even")
		dst := make([]types.Value, 1)
		if err := dec.Decode(buf, dst); err != nil {
			t.Fatal(err)
		}
		out, err := enc.Encode(nil, types.Row{Vals: dst})
		if err != nil || string(out) != string(buf) {
			t.Fatalf("round trip: %q, %v", out, err)
		}
		copy(buf, "XXXX")
		if dst[0].Kind() != typ.Kind || dst[0].Str() != "any {text}, \x00 even" {
			t.Fatalf("decoded %#v", dst[0])
		}
	}
	for _, tc := range []struct {
		schema types.Schema
		opts   map[string]string
		want   string
	}{
		{types.NewSchema(types.Column{Name: "a", Type: types.String}, types.Column{Name: "b", Type: types.String}), nil, "exactly one physical column"},
		{types.NewSchema(types.Column{Name: "a", Type: types.Int}), nil, "must be STRING or BYTES"},
		{types.NewSchema(types.Column{Name: "a", Type: types.String}), map[string]string{"charset": "latin1"}, "only 'UTF-8'"},
		{types.NewSchema(types.Column{Name: "a", Type: types.String}), map[string]string{"charst": "utf-8"}, `did you mean "charset"?`},
	} {
		if _, err := New().NewDecoder(tc.schema, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %s", err, tc.want)
		}
	}
}

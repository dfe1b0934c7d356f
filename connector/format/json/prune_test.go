package json

import (
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// A pruned decoder decodes the fields read as an unpruned one does,
// leaves the others NULL without looking into their values (as Flink's
// json format does with projection push-down), and still checks the
// record's syntax.
func TestPrune(t *testing.T) {
	schema := bidSchema() // bidtime, price, item, supplier_id, qty, rate, ok
	read := []bool{false, true, false, true, false, false, false}
	full, err := New().NewDecoder(schema, map[string]string{"fail-on-missing-field": "true"})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := New().NewDecoder(schema, map[string]string{"fail-on-missing-field": "true"})
	if err != nil {
		t.Fatal(err)
	}
	dec.(*Decoder).Prune(read)
	for _, rec := range []string{
		`{"bidtime":"2020-04-15 08:05:00","price":4.00,"item":"C \"q\" \\","supplier_id":"s1","qty":7,"rate":0.5,"ok":true}`,
		`{"ok":false,"rate":1e3,"qty":-1,"supplier_id":"s\u00e9","item":"\\\\","price":12.5,"bidtime":"2020-04-15 08:05:00.5"}`,
		`{"bidtime":null,"price":1,"item":{"nested":["a\"]",{"b":"}"}]},"supplier_id":"x","qty":1,"rate":2,"ok":null}`,
	} {
		want := make([]types.Value, schema.Len())
		if err := full.Decode([]byte(rec), want); err != nil {
			t.Fatalf("%s: %v", rec, err)
		}
		got := make([]types.Value, schema.Len())
		if err := dec.Decode([]byte(rec), got); err != nil {
			t.Fatalf("%s: %v", rec, err)
		}
		for i := range got {
			switch {
			case read[i] && !deepEqual(got[i], want[i]):
				t.Errorf("%s: column %d read as %v, want %v", rec, i, got[i], want[i])
			case !read[i] && !got[i].IsNull():
				t.Errorf("%s: column %d not read but set to %v", rec, i, got[i])
			}
		}
	}
	for _, tc := range []struct{ rec, err string }{
		// Values of fields not read are not decoded: no error, as in Flink.
		{`{"bidtime":"yesterday","price":4.00,"supplier_id":"s1","qty":"many"}`, ""},
		// A field read is still checked, and must be there.
		{`{"price":"four","supplier_id":"s1"}`, `field "price"`},
		{`{"supplier_id":"s1"}`, `field "price": missing`},
		// The syntax of the whole record still is.
		{`{"price":4,"supplier_id":"s1","item":"unterminated}`, "unterminated string"},
		{`{"price":4,"supplier_id":"s1","item":[1,2}`, "invalid JSON"},
		{`{"price":4,"supplier_id":"s1","item":"a\"}`, "unterminated string"},
	} {
		got := make([]types.Value, schema.Len())
		err := dec.Decode([]byte(tc.rec), got)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.rec, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, want an error containing %q", tc.rec, err, tc.err)
		}
	}
}

package metricstore

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/types"
)

func TestParseKeys(t *testing.T) {
	g := Group{Name: "g", Keys: []types.Column{
		{Name: "user", Type: types.String},
		{Name: "region", Type: types.SmallInt},
		{Name: "day", Type: types.Date},
		{Name: "code", Type: types.Char(4)},
		{Name: "amount", Type: types.Decimal(6, 2)},
		{Name: "score", Type: types.Double},
	}}
	for _, tc := range []struct{ in, want string }{
		{`[]`, ``},
		{` [ ["ann", 3, "2026-12-02", "ab", 1.5, 2] ] `, `ann,3,2026-12-02,ab  ,1.50,2.0`},
		{`[{"score": -1e3, "code": "abcd", "amount": "12.345", "day": "2026-01-31", "region": -2, "user": "b\"ob\u00e9"}]`, `b"obé,-2,2026-01-31,abcd,12.35,-1000.0`},
		{`[[null, null, null, null, null, null], ["", "7", "2026-12-02", "", 0, "1.25"]]`, `NULL,NULL,NULL,NULL,NULL,NULL|,7,2026-12-02,    ,0.00,1.25`},
	} {
		keys, err := ParseKeys(g, []byte(tc.in))
		if err != nil {
			t.Errorf("ParseKeys(%s): %v", tc.in, err)
			continue
		}
		var rows []string
		for _, k := range keys {
			var vs []string
			for i, v := range k {
				vs = append(vs, types.FormatValue(v, g.Keys[i].Type))
			}
			rows = append(rows, strings.Join(vs, ","))
		}
		if got := strings.Join(rows, "|"); got != tc.want {
			t.Errorf("ParseKeys(%s) = %s, want %s", tc.in, got, tc.want)
		}
		for i, k := range keys {
			for j, v := range k {
				if !v.IsNull() && v.Kind() != g.Keys[j].Type.Kind {
					t.Errorf("ParseKeys(%s): key %d column %d is a %s", tc.in, i, j, v.Kind())
				}
			}
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`{}`, "the keys are not a JSON array"},
		{`[["a",1,"2026-12-02","a",1,1]`, "expected , or ] after key 0"},
		{`[["a",1,"2026-12-02","a",1,1]] x`, "unexpected text after the keys"},
		{`[["a",1]]`, "key 0 has 2 values; metric group g is keyed by (user, region, day, code, amount, score)"},
		{`[["a",1,"2026-12-02","a",1,1,7]]`, "key 0 has more than 6 values"},
		{`[["a",100000,"2026-12-02","a",1,1]]`, "key 0, column region (at byte 6): 100000 is out of the range of SMALLINT"},
		{`[["a",1,"yesterday","a",1,1]]`, "key 0, column day (at byte 8): cannot read a STRING as DATE"},
		{`[["a",1,"2026-12-02","a",[1],1]]`, "key 0, column amount (at byte 25): a key value is a JSON string, number, boolean or null"},
		{`[{"usr": "a"}]`, `key 0: metric group g has no key column named "usr" (did you mean "user"?)`},
		{`[{"user": "a", "user": "b"}]`, "key 0: column user is given twice"},
		{`[{"user": "a"}]`, "key 0 has no value for key column region"},
		{`[3]`, "key 0 is neither an array of values nor an object of columns"},
		{"[[\"a\x01\",1]]", "key 0, column user (at byte 2): malformed string"},
		{`[["a",01]]`, "expected , or ] in key 0"},
		{`[["a",-]]`, "malformed number"},
	} {
		_, err := ParseKeys(g, []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseKeys(%s): %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestResultJSON(t *testing.T) {
	s := open(t, Options{}, Group{Name: "g", Version: 3,
		Keys: []types.Column{{Name: "k", Type: types.String}},
		Metrics: []Metric{
			{Name: "n", Type: types.BigInt}, {Name: "avg", Type: types.Double}, {Name: "amount", Type: types.Decimal(10, 2)},
			{Name: "last", Type: types.String}, {Name: "at", Type: types.Timestamp(3)}, {Name: "ok", Type: types.Boolean},
			{Name: "tags", Type: types.ArrayOf(types.String)}, {Name: "raw", Type: types.Bytes},
		}})
	commit(t, s, "g", Change{Key: []types.Value{types.StringValue("a\"\n\xff")}, EventTime: 1764669600123, Values: []types.Value{
		types.BigIntValue(-5), types.DoubleValue(math.NaN()), types.DecimalValue(-1250, 2), types.StringValue("x"),
		types.TimestampValue(1764669600123000), types.BoolValue(true), types.ArrayValue([]types.Value{types.StringValue("t"), {}}), types.BytesValue([]byte{1, 2}),
	}})
	commit(t, s, "g", Change{Key: []types.Value{types.StringValue("b")}, EventTime: 0, Values: []types.Value{
		types.BigIntValue(1), types.DoubleValue(0.25), {}, {}, {}, {}, {}, {},
	}, Mask: []bool{true, true, true, false, false, false, false, false}})
	keys := [][]types.Value{{types.StringValue("a\"\n\xff")}, {types.StringValue("b")}, {types.StringValue("c")}}
	r := read(t, s, "g", keys)
	out := r.AppendJSON(nil)
	// ReadJSON writes the same without a Result.
	direct, err := s.ReadJSON([]byte("x"), "g", keys, nil)
	if err != nil || string(direct) != "x"+string(out) {
		t.Errorf("ReadJSON: %v\n%s\nwant\n%s", err, direct, out)
	}
	sub, err := s.ReadJSON(nil, "g", keys[1:2], []string{"amount", "n"})
	if want := `"metrics":["amount","n"]`; err != nil || !strings.Contains(string(sub), want) || !strings.Contains(string(sub), `"values":[null,1],"statuses":["NULL_VALUE","PRESENT"]`) {
		t.Errorf("ReadJSON of two metrics: %v %s", err, sub)
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := `{"metadata":{"group":"g","version":3,"keys":["k"],"metrics":["n","avg","amount","last","at","ok","tags","raw"],"token":"` + r.Token.String() + `"},"results":[` +
		`{"key":["a\"\n\ufffd"],"values":[-5,"NaN",-12.50,"x","2025-12-02 10:00:00.123",true,["t",null],"AQI="],"statuses":["PRESENT","PRESENT","PRESENT","PRESENT","PRESENT","PRESENT","PRESENT","PRESENT"],` +
		`"event_timestamps":["2025-12-02T10:00:00.123Z","2025-12-02T10:00:00.123Z","2025-12-02T10:00:00.123Z","2025-12-02T10:00:00.123Z","2025-12-02T10:00:00.123Z","2025-12-02T10:00:00.123Z","2025-12-02T10:00:00.123Z","2025-12-02T10:00:00.123Z"]},` +
		`{"key":["b"],"values":[1,0.25,null,null,null,null,null,null],"statuses":["PRESENT","PRESENT","NULL_VALUE","NOT_FOUND","NOT_FOUND","NOT_FOUND","NOT_FOUND","NOT_FOUND"],` +
		`"event_timestamps":["1970-01-01T00:00:00.000Z","1970-01-01T00:00:00.000Z","1970-01-01T00:00:00.000Z",null,null,null,null,null]},` +
		`{"key":["c"],"values":[null,null,null,null,null,null,null,null],"statuses":["NOT_FOUND","NOT_FOUND","NOT_FOUND","NOT_FOUND","NOT_FOUND","NOT_FOUND","NOT_FOUND","NOT_FOUND"],"event_timestamps":[null,null,null,null,null,null,null,null]}]}`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestEventJSON(t *testing.T) {
	s := open(t, Options{}, Group{Name: "g", Version: 1, Keys: []types.Column{{Name: "k", Type: types.BigInt}},
		Metrics: []Metric{{Name: "n", Type: types.BigInt}}})
	all1 := subscribe(t, s, "g", SubscribeOptions{})
	all2 := subscribe(t, s, "g", SubscribeOptions{})
	some := subscribe(t, s, "g", SubscribeOptions{Metrics: []string{"n"}})
	commit(t, s, "g", set([]types.Value{types.BigIntValue(7)}, 1000, types.BigIntValue(1)), Change{Key: []types.Value{types.BigIntValue(8)}, Delete: true})
	if err := s.Define(Group{Name: "g", Version: 2, Keys: []types.Column{{Name: "k", Type: types.BigInt}},
		Metrics: []Metric{{Name: "n", Type: types.BigInt}, {Name: "m", Type: types.Decimal(5, 1)}}}); err != nil {
		t.Fatal(err)
	}
	var outs [3][]string
	for i, sub := range []*Subscription{all1, all2, some} {
		for range 2 {
			ev := next(t, sub)
			b, err := ev.AppendJSON([]byte("data: "))
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(b[len("data: "):]) || strings.Contains(string(b), "\n") {
				t.Errorf("not one line of JSON: %s", b)
			}
			outs[i] = append(outs[i], string(b))
		}
	}
	epoch := all1.Token().String()[:16]
	want := []string{
		`data: {"kind":"changes","group":"g","version":1,"reset":false,"token":"` + epoch + `-1","metrics":["n"],"results":[{"key":[7],"values":[1],"statuses":["PRESENT"],"event_timestamps":["1970-01-01T00:00:01.000Z"]},{"key":[8],"deleted":true}]}`,
		`data: {"kind":"redefined","group":"g","version":2,"reset":false,"token":"` + epoch + `-2","keys":[{"name":"k","type":"BIGINT"}],"metrics":[{"name":"n","type":"BIGINT"},{"name":"m","type":"DECIMAL(5, 1)"}]}`,
	}
	for i := range outs {
		wantLines(t, outs[i], want)
	}
	// The subscribers of everything share one encoding of the commit.
	g, _ := s.group("g")
	g.mu.RLock()
	shared := g.log.recs[0].json.Load()
	g.mu.RUnlock()
	if shared == nil || string(*shared) != strings.TrimPrefix(want[0], "data: ") {
		t.Errorf("the commit's shared encoding is %v", shared)
	}
	// Only the last 16 encodings are kept.
	for i := range 20 {
		commit(t, s, "g", set([]types.Value{types.BigIntValue(int64(i))}, 1000, types.BigIntValue(1), types.DecimalValue(1, 1)))
		for {
			ev := next(t, all1)
			if _, err := ev.SharedJSON(); err != nil {
				t.Fatal(err)
			}
			if !ev.Token.IsZero() {
				break
			}
		}
	}
	kept := 0
	g.mu.RLock()
	for _, r := range g.log.recs {
		if r.json.Load() != nil {
			kept++
		}
	}
	g.mu.RUnlock()
	if kept != 16 {
		t.Errorf("%d shared encodings kept, want 16", kept)
	}
}

// ParseKeys never panics, and what it accepts has one value per key
// column.
func FuzzParseKeys(f *testing.F) {
	for _, seed := range []string{`[]`, `[["a", 1, 2.5]]`, `[{"user": "a", "n": -1, "d": "1.5"}]`, `[[null, true, 1e400]]`, `[["\u00e9\ud800", 01, -]]`} {
		f.Add([]byte(seed))
	}
	g := Group{Name: "g", Keys: []types.Column{{Name: "user", Type: types.String}, {Name: "n", Type: types.TinyInt}, {Name: "d", Type: types.Decimal(4, 1)}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := ParseKeys(g, data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		for _, k := range keys {
			if len(k) != len(g.Keys) {
				t.Fatalf("a key of %d values", len(k))
			}
		}
	})
}

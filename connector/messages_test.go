package connector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector/format/json"
	"github.com/sluicesql/sluice/types"
)

// testMessage is a message of a made-up queue: a payload and where it
// came from.
type testMessage struct {
	topic   string
	payload []byte
}

func testRows(t *testing.T, opts Options, read []bool) *MessageRows[*testMessage] {
	t.Helper()
	tbl := Table{Name: "m", Options: opts, Read: read, Schema: types.Schema{Columns: []types.Column{
		{Name: "a", Type: types.Type{Kind: types.KindInt}},
		{Name: "b", Type: types.Type{Kind: types.KindVarChar}},
	}}}
	policy, err := NewErrorPolicy(tbl, "json")
	if err != nil {
		t.Fatal(err)
	}
	return &MessageRows[*testMessage]{Table: tbl, Format: json.New(), Options: opts.WithPrefix("json."), Policy: policy,
		Meta:  []func(*testMessage) types.Value{func(m *testMessage) types.Value { return types.StringValue(m.topic) }},
		Where: func(m *testMessage) string { return "topic '" + m.topic + "'" }}
}

// show prints a row of testRows' table with its METADATA column.
func show(r types.Row) string {
	kinds := []types.Kind{types.KindInt, types.KindVarChar, types.KindVarChar}
	var out []string
	for i, v := range r.Vals {
		out = append(out, types.FormatValue(v, types.Type{Kind: kinds[i]}))
	}
	return strings.Join(out, ", ")
}

func (m *testMessage) add(t *testing.T, d *MessageDecoder[*testMessage], b *types.Batch, off int64) error {
	t.Helper()
	return d.Add(b, off, m.payload, m)
}

// TestMessageDecoder decodes payloads into rows of a partition with the
// METADATA columns after the physical ones, and fails on a malformed
// payload, naming where it was.
func TestMessageDecoder(t *testing.T) {
	rows := testRows(t, Options{}, nil)
	d, err := rows.NewDecoder(3)
	if err != nil {
		t.Fatal(err)
	}
	b := &types.Batch{}
	if err := (&testMessage{"x", []byte(`{"a":1,"b":"one"}`)}).add(t, d, b, 10); err != nil {
		t.Fatal(err)
	}
	err = (&testMessage{"y", []byte(`not json`)}).add(t, d, b, 11)
	if err == nil || !strings.Contains(err.Error(), "source m: topic 'y': cannot decode record") {
		t.Errorf("got %v", err)
	}
	if len(b.Rows) != 1 {
		t.Fatalf("%d rows, want the one decoded", len(b.Rows))
	}
	r := b.Rows[0]
	if got := show(r); got != "1, one, x" || r.Origin != (types.Origin{Part: 3, Offset: 10}) {
		t.Errorf("row %s at %+v", got, r.Origin)
	}
}

// TestMessageDecoderSkips counts and dead-letters a malformed payload
// with 'dead-letter.path', adding no row for it.
func TestMessageDecoderSkips(t *testing.T) {
	dl := filepath.Join(t.TempDir(), "dead.txt")
	rows := testRows(t, Options{"dead-letter.path": dl}, nil)
	d, err := rows.NewDecoder(0)
	if err != nil {
		t.Fatal(err)
	}
	b := &types.Batch{}
	for i, p := range []string{`{"a":1}`, `{"a":`, `{"a":3}`} {
		if err := (&testMessage{"t", []byte(p)}).add(t, d, b, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range b.Rows {
		got = append(got, show(r))
	}
	if strings.Join(got, " | ") != "1, NULL, t | 3, NULL, t" || d.Skipped() != 1 || rows.Policy.Skipped() != 1 {
		t.Errorf("rows %q, %d skipped (policy %d)", got, d.Skipped(), rows.Policy.Skipped())
	}
	if err := rows.Policy.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(dl); string(data) != "{\"a\":\n" {
		t.Errorf("dead letters %q", data)
	}
}

// TestMessageDecoderOptions refuses the format's bad options when the
// decoder is made.
func TestMessageDecoderOptions(t *testing.T) {
	rows := testRows(t, Options{"json.no-such-option": "x"}, nil)
	if _, err := rows.NewDecoder(0); err == nil || !strings.Contains(err.Error(), "no-such-option") {
		t.Errorf("got %v", err)
	}
}

// TestMessageDecoderPrunes decodes only the columns the job reads.
func TestMessageDecoderPrunes(t *testing.T) {
	rows := testRows(t, Options{}, []bool{true, false, true})
	d, err := rows.NewDecoder(0)
	if err != nil {
		t.Fatal(err)
	}
	b := &types.Batch{}
	if err := (&testMessage{"x", []byte(`{"a":1,"b":"one"}`)}).add(t, d, b, 0); err != nil {
		t.Fatal(err)
	}
	if got := show(b.Rows[0]); got != "1, NULL, x" {
		t.Errorf("row %s, want b left out", got)
	}
}

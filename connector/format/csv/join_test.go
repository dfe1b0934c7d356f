package csv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/filesystem"
	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/connector/format/csv"
	"github.com/sluicesql/sluice/types"
)

// countingFormat is the csv format whose decoders count the bytes a
// line-oriented reader hands them to find where a record ends.
type countingFormat struct {
	csv.Factory
	scanned *int
}

func (f countingFormat) Name() string { return "counting-csv" }

func (f countingFormat) NewDecoder(schema types.Schema, opts map[string]string) (format.Decoder, error) {
	d, err := f.Factory.NewDecoder(schema, opts)
	if err != nil {
		return nil, err
	}
	return &countingDecoder{Decoder: d.(*csv.Decoder), scanned: f.scanned}, nil
}

type countingDecoder struct {
	*csv.Decoder
	scanned *int
}

func (d *countingDecoder) Incomplete(data []byte) bool {
	*d.scanned += len(data)
	return d.Decoder.Incomplete(data)
}

func (d *countingDecoder) Continues(line []byte) bool {
	*d.scanned += len(line)
	return d.Decoder.Continues(line)
}

// A stray quote opens a quoted field that swallows the following lines
// (a quoted field may hold line breaks) up to the end of the file or the
// largest record: finding where that record ends looks at each line once,
// not at the whole record again after every line (which took 37 s for
// 100,000 lines).
func TestStrayQuoteIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("1,\"oops\n")
	for i := range 5000 {
		b.WriteString(strconv.Itoa(i) + ",name\n")
	}
	b.WriteString("9999,\"last\"\n")
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var scanned int
	formats := format.NewRegistry()
	if err := formats.Register(countingFormat{scanned: &scanned}); err != nil {
		t.Fatal(err)
	}
	schema := types.NewSchema(types.Column{Name: "id", Type: types.Int}, types.Column{Name: "name", Type: types.String})
	src, err := filesystem.New().CreateSource(connector.Table{Name: "t", Schema: schema, Options: connector.Options{
		"connector": "filesystem", "path": path, "format": "counting-csv", "counting-csv.ignore-parse-errors": "true"}},
		connector.Env{Formats: formats})
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []types.Row
	for {
		batch := types.NewBatch(1024, 2)
		err := r.Read(context.Background(), batch, 1024)
		rows = append(rows, batch.Rows...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The quote of "oops opens a field that the quote before last
	// closes: `"oops\n0,name\n...\n9999,"` is one field followed by
	// `last"`, a malformed record, skipped.
	if len(rows) != 0 {
		t.Fatalf("%d rows, want none (one malformed record)", len(rows))
	}
	if size := b.Len(); scanned > 2*size {
		t.Fatalf("finding the records of %d bytes scanned %d bytes, want at most twice the input", size, scanned)
	}
}

// Continues, line after line, agrees with Incomplete over the whole
// record so far, for random records of quotes, delimiters, escapes and
// line breaks.
func TestContinuesAgreesWithIncomplete(t *testing.T) {
	schema := types.NewSchema(types.Column{Name: "a", Type: types.String})
	for _, opts := range []map[string]string{{}, {"escape-character": `\`}, {"quote-character": "'", "field-delimiter": ";"}} {
		o, err := csv.ParseOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := csv.NewDecoder(schema, o)
		lines, _ := csv.NewDecoder(schema, o)
		alphabet := []byte{'a', o.Delimiter, o.Quote, '\\', '\n'}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 2000 {
			rec := make([]byte, rng.IntN(30))
			for i := range rec {
				rec[i] = alphabet[rng.IntN(len(alphabet))]
			}
			parts := bytes.Split(rec, []byte{'\n'})
			got := lines.Incomplete(parts[0])
			for k := 1; k < len(parts); k++ {
				if want := whole.Incomplete(bytes.Join(parts[:k], []byte{'\n'})); got != want {
					t.Fatalf("options %v, record %q, after %d lines: incremental %v, whole %v", opts, rec, k, got, want)
				}
				got = lines.Continues(parts[k])
			}
			if want := whole.Incomplete(rec); got != want {
				t.Fatalf("options %v, record %q: incremental %v, whole %v", opts, rec, got, want)
			}
		}
	}
}

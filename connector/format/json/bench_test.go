package json

import (
	"testing"

	"github.com/sluicesql/sluice/types"
)

var benchRecord = []byte(`{"bidtime":"2020-04-15 08:05:00.000","price":4.00,"item":"C","supplier_id":"supplier1",` +
	`"qty":17,"rate":0.125,"ok":true,"extra":{"note":"unused \"field\"","tags":["a","b"],"n":12345}}`)

func BenchmarkJSONDecode(b *testing.B) {
	dec := NewDecoder(bidSchema(), false, false)
	dst := make([]types.Value, bidSchema().Len())
	b.SetBytes(int64(len(benchRecord)))
	b.ReportAllocs()
	for b.Loop() {
		clear(dst)
		if err := dec.Decode(benchRecord, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkJSONEncode(b *testing.B) {
	dec := NewDecoder(bidSchema(), false, false)
	row := make([]types.Value, bidSchema().Len())
	if err := dec.Decode(benchRecord, row); err != nil {
		b.Fatal(err)
	}
	enc, err := New().NewEncoder(bidSchema(), nil)
	if err != nil {
		b.Fatal(err)
	}
	buf, _ := enc.Encode(nil, types.Row{Vals: row})
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = enc.Encode(buf[:0], types.Row{Vals: row}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

package changelog

import (
	"testing"

	"github.com/sluicesql/sluice/connector/format"
	"github.com/sluicesql/sluice/types"
)

func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct{ format, rec string }{
		{"debezium-json", `{"before":{"id":1,"name":"scooter","price":5.18},"after":{"id":1,"name":"scooter","price":5.15},"source":{"db":"inventory","table":"products"},"op":"u","ts_ms":1589362330904}`},
		{"canal-json", `{"data":[{"id":"1","name":"scooter","price":"5.15"}],"database":"inventory","old":[{"price":"5.18"}],"table":"products","ts":1589373560798,"type":"UPDATE"}`},
		{"maxwell-json", `{"database":"inventory","table":"products","type":"update","ts":1477053217,"data":{"id":1,"name":"scooter","price":5.15},"old":{"price":5.18}}`},
	} {
		b.Run(c.format, func(b *testing.B) {
			f := factory(b, c.format)
			dec, err := f.NewDecoder(schema, nil)
			if err != nil {
				b.Fatal(err)
			}
			cd := dec.(format.ChangelogDecoder)
			batch := types.NewBatch(2, schema.Len())
			add := func(k types.RowKind) []types.Value { return batch.AddRow(k, types.NoOrigin, schema.Len()) }
			data := []byte(c.rec)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				batch.Reset()
				if err := cd.DecodeChangelog(data, add); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, f := range Formats() {
		b.Run(f.Name(), func(b *testing.B) {
			enc, err := f.NewEncoder(schema, nil)
			if err != nil {
				b.Fatal(err)
			}
			r := row(types.UpdateAfter, 1, "scooter", 515)
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				if buf, err = enc.Encode(buf[:0], r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

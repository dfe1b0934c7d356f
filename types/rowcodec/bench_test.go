package rowcodec

import (
	"fmt"
	"testing"

	"github.com/sluicesql/sluice/types"
)

// bidTypes is Nexmark's Bid table without its free-text column: auction,
// bidder, price, channel, url, date_time.
var bidTypes = []types.Type{
	types.BigInt, types.BigInt, types.Decimal(10, 2), types.String, types.String, types.Timestamp(3),
}

var channels = []string{"Google", "Facebook", "Baidu", "Apple"}

func bidBatch(n int, start int64) *types.Batch {
	b := types.NewBatch(n, len(bidTypes))
	for i := 0; i < n; i++ {
		k := start + int64(i)
		v := b.AddRow(types.Insert, types.Origin{Part: 1, Offset: k}, len(bidTypes))
		v[0] = types.BigIntValue(1000 + k%10000)
		v[1] = types.BigIntValue(2000 + (k*7919)%50000)
		v[2] = types.DecimalValue(100+(k*31)%90000, 2)
		v[3] = types.StringValue(channels[k%4])
		v[4] = types.StringValue(fmt.Sprintf("https://www.nexmark.com/item.htm?query=%d", k%1000))
		v[5] = types.TimestampValue(1_700_000_000_000_000 + k*1000)
	}
	return b
}

func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{1, 64, 1024} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			c := mustCodec(b, bidTypes)
			e := c.NewEncoder()
			in := bidBatch(n, 0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Reset()
				if err := e.AppendBatch(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(e.Len())/float64(n), "bytes/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1, 64, 1024} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			c := mustCodec(b, bidTypes)
			e := c.NewEncoder()
			if err := e.AppendBatch(bidBatch(n, 0)); err != nil {
				b.Fatal(err)
			}
			payload := e.Bytes()
			d := c.NewDecoder()
			out := types.NewBatch(n, len(bidTypes))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out.Reset()
				if err := d.Reset(payload); err != nil {
					b.Fatal(err)
				}
				if _, err := d.Decode(out, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

package share

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

// genSource is an endless partition of rows of 4 columns, made as fast
// as they are read: what a hub costs, without a connector's own cost.
type genSource struct{}

func (genSource) Partitions() int { return 1 }
func (genSource) Bounded() bool   { return false }
func (genSource) Open(context.Context, int) (connector.Reader, error) {
	return &genReader{}, nil
}

type genReader struct{ n int64 }

func (r *genReader) Read(_ context.Context, b *types.Batch, max int) error {
	for range max {
		r.n++
		v := b.AddRow(types.Insert, types.Origin{Offset: r.n}, 4)
		v[0], v[1], v[2], v[3] = types.BigIntValue(r.n), types.BigIntValue(r.n*2), types.StringValue("x"), types.BigIntValue(7)
	}
	return nil
}

func (r *genReader) Close() error { return nil }

// BenchmarkShare reads b.N rows through a hub with 1, 2 and 4
// subscribers (each reading every row, in a goroutine of its own), and
// for comparison with a reader of each subscriber's own ("apart").
func BenchmarkShare(b *testing.B) {
	t := connector.Table{Name: "g", Options: connector.Options{"connector": "gen"}}
	for _, subs := range []int{1, 2, 4} {
		for _, mode := range []string{"shared", "apart"} {
			b.Run(fmt.Sprintf("%s/subscribers=%d", mode, subs), func(b *testing.B) {
				b.ReportAllocs()
				reg := NewRegistry(Options{})
				var readers []connector.Reader
				for i := range subs {
					var src connector.Source = genSource{}
					if mode == "shared" {
						var err error
						if src, err = reg.Wrap(fmt.Sprint("job", i), t, genSource{}, false); err != nil {
							b.Fatal(err)
						}
					}
					r, err := src.Open(context.Background(), 0)
					if err != nil {
						b.Fatal(err)
					}
					readers = append(readers, r)
				}
				b.ResetTimer()
				var wg sync.WaitGroup
				for _, r := range readers {
					wg.Go(func() {
						batch := types.NewBatch(1024, 4)
						for n := 0; n < b.N; {
							batch.Reset()
							if err := r.Read(context.Background(), batch, 1024); err != nil {
								b.Error(err)
								return
							}
							n += len(batch.Rows)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				for _, r := range readers {
					r.Close()
				}
			})
		}
	}
}

package http

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

var benchSchema = types.NewSchema(
	types.Column{Name: "device", Type: types.String},
	types.Column{Name: "level", Type: types.Int},
	types.Column{Name: "temp", Type: types.Double},
	types.Column{Name: "msg", Type: types.String},
)

func benchBody(rows int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"device":"dev-%d","level":%d,"temp":%d.5,"msg":"reading %d of the sensor"}`, i%100, i%5, 20+i%10, i)
	}
	b.WriteByte(']')
	return b.String()
}

// BenchmarkPushDecode splits and decodes a request's body into rows.
func BenchmarkPushDecode(b *testing.B) {
	for _, rows := range []int{1, 100, 1000} {
		b.Run(fmt.Sprint(rows), func(b *testing.B) {
			o := connector.Options{"connector": "http", "source.listen": "127.0.0.1:0", "source.auth": "none"}
			src, err := New().CreateSource(connector.Table{Name: "hook", Schema: benchSchema, Options: o}, env())
			if err != nil {
				b.Fatal(err)
			}
			s := src.(*PushSource)
			r := &PushReader{src: s, phys: benchSchema.Len(), width: benchSchema.Len()}
			dec, _ := s.format.NewDecoder(benchSchema, s.fmtOpts)
			body := []byte(benchBody(rows))
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := r.decode(dec, body, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkPushReader posts requests of 100 rows from 8 clients to a
// reader that a loop reads (as a job without checkpoints does): each
// request is answered at the read after its rows.
func BenchmarkPushReader(b *testing.B) {
	o := connector.Options{"connector": "http", "source.listen": "127.0.0.1:0", "source.auth": "none"}
	src, err := New().CreateSource(connector.Table{Name: "hook", Schema: benchSchema, Options: o}, env())
	if err != nil {
		b.Fatal(err)
	}
	rd, err := src.Open(context.Background(), 0)
	if err != nil {
		b.Fatal(err)
	}
	r := rd.(*PushReader)
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var batch types.Batch
		for ctx.Err() == nil {
			batch.Reset()
			r.Read(ctx, &batch, 1024)
		}
	}()
	const rows = 100
	body := benchBody(rows)
	url := "http://" + r.Addr() + "/"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	b.ReportAllocs()
	b.SetParallelism(8)
	var mu sync.Mutex
	var failed error
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(url, "application/json", strings.NewReader(body))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("status %s", resp.Status)
				}
			}
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
				return
			}
		}
	})
	if failed != nil {
		b.Fatal(failed)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkSink writes rows to a sink that sends them, 500 a request, to
// a local server.
func BenchmarkSink(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	for _, mode := range []string{"array", "ndjson"} {
		b.Run(mode, func(b *testing.B) {
			o := connector.Options{"connector": "http", "url": srv.URL, "sink.batch.mode": mode}
			sk, err := New().CreateSink(connector.Table{Name: "out", Schema: benchSchema, Options: o}, env())
			if err != nil {
				b.Fatal(err)
			}
			defer sk.Close()
			var batch types.Batch
			for i := range 1000 {
				batch.Append(types.Row{Kind: types.Insert, Vals: []types.Value{types.StringValue(fmt.Sprintf("dev-%d", i%100)),
					types.IntValue(types.KindInt, int64(i%5)), types.DoubleValue(21.5), types.StringValue("reading of the sensor")}})
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := sk.Write(context.Background(), &batch); err != nil {
					b.Fatal(err)
				}
			}
			if err := sk.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

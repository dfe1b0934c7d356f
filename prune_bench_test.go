package sluice_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/cputime"
)

// BenchmarkJSONProjection is a job that reads 2 of the 7 fields of
// 214-byte JSON bid records (SLUICE_PROJECTION_RECORDS, default
// 1,000,000) from a file, filters them and writes half of them to a
// directory: the cost of decoding only what is read, end to end.
//
//	GOMAXPROCS=1 go test . -run '^$' -bench JSONProjection -benchtime 1x
func BenchmarkJSONProjection(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("SLUICE_PROJECTION_RECORDS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	size := writeBidRecords(b, filepath.Join(dir, "bids.jsonl"), n)
	job := fmt.Sprintf(`
CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING)
  WITH ('connector' = 'filesystem', 'path' = '%[1]s/bids.jsonl', 'format' = 'json');
CREATE TABLE out (auction BIGINT, price BIGINT) WITH ('connector' = 'filesystem', 'path' = '%[1]s/out/', 'format' = 'json');
INSERT INTO out SELECT auction, price FROM bids WHERE price > 5000000;`, dir)
	b.SetBytes(size)
	b.ResetTimer()
	cpu := cputime.Seconds()
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "out"))
		e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Run(context.Background(), "job.sql", []byte(job)); err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if c := cputime.Seconds() - cpu; c > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/c, "records/cpu-s")
	}
}

// writeBidRecords writes n JSON bids of 214 bytes on average, with the
// field repetition of Nexmark's bids (few channels, a URL per auction),
// and returns the file's size.
func writeBidRecords(b *testing.B, path string, n int) int64 {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(1, 2))
	channels := []string{"Google", "Facebook", "Baidu", "Apple"}
	const letters = "abcdefghijklmnopqrstuvwxyz"
	extra := make([]byte, 40)
	var size int64
	for i := range n {
		for j := range extra {
			extra[j] = letters[rng.IntN(len(letters))]
		}
		auction := 1000 + rng.IntN(50000)
		k, _ := fmt.Fprintf(w, `{"auction":%d,"bidder":%d,"price":%d,"channel":"%s","url":"https://www.nexmark.com/%s/item.htm?query=1&channel_id=%d","dateTime":"2024-01-01 %02d:%02d:%02d.%03d","extra":"%s"}`+"\n",
			auction, 1000+rng.IntN(20000), 100+rng.IntN(10_000_000), channels[rng.IntN(len(channels))],
			letters[auction%20:auction%20+5], rng.IntN(1000), i/3_600_000%24, i/60_000%60, i/1000%60, i%1000, extra[:20+rng.IntN(21)])
		size += int64(k)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return size
}

package sluice_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/nexmark"
	"github.com/sluicesql/sluice/internal/cputime"
	"github.com/sluicesql/sluice/types"
)

// nexmarkUnsupported are the Nexmark queries of testdata/nexmark that do
// not run yet, each with a part of the error it must fail with, so that
// this list stays true.
var nexmarkUnsupported = map[string]string{}

// TestNexmark runs every Nexmark query of testdata/nexmark over 20,000
// events of the nexmark connector (20 s of event time) and checks that it
// runs to the end and, for the queries whose result follows from the
// model, what it returns.
func TestNexmark(t *testing.T) {
	ddl, err := os.ReadFile("testdata/nexmark/ddl.sql")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/nexmark/q*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	setup := strings.NewReplacer("$EVENTS", "20000", "$RATE", "1000").Replace(string(ddl))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		t.Run(name, func(t *testing.T) {
			q, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			e, err := sluice.Open(sluice.Options{Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			src := setup + "\n" + string(q)
			err = e.Run(ctx, name+".sql", []byte(src))
			if want, ok := nexmarkUnsupported[name]; ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("%s is listed as unsupported (%q) but gave %v", name, want, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s", sluice.FormatError(err, []byte(src)))
			}
			rows := strings.Count(out.String(), "\n") - 1 // the header
			t.Logf("%s: %d changelog rows", name, rows)
			if want, ok := nexmarkRows[name]; ok && rows != want {
				t.Errorf("%s: %d rows, want %d", name, rows, want)
			}
			if rows <= 0 {
				t.Errorf("%s: no rows", name)
			}
		})
	}
}

// nexmarkRows are result sizes that follow from the model: 46 bids in
// every 50 events.
var nexmarkRows = map[string]int{"q0": 18400, "q1": 18400, "q10": 18400, "q13": 18400, "q22": 18400}

// nexmarkEvents reads the events the queries see straight from the
// connector, for the reference results.
type nxPerson struct {
	id    int64
	state string
}
type nxAuction struct {
	id, category, seller, opens, expires int64
}
type nxBid struct {
	auction, price, at int64
}

func nexmarkEvents(t *testing.T) (people []nxPerson, auctions []nxAuction, bids []nxBid) {
	t.Helper()
	row := func(fields ...string) types.Type {
		var fs []types.Field
		for _, f := range fields {
			typ := types.BigInt
			switch f {
			case "state":
				typ = types.String
			case "dateTime", "expires":
				typ = types.Timestamp(3)
			}
			fs = append(fs, types.Field{Name: f, Type: typ})
		}
		return types.RowOf(fs...)
	}
	schema := types.Schema{Columns: []types.Column{{Name: "event_type", Type: types.Int},
		{Name: "person", Type: row("id", "state")},
		{Name: "auction", Type: row("id", "category", "seller", "dateTime", "expires")},
		{Name: "bid", Type: row("auction", "price", "dateTime")}}}
	src, err := nexmark.New().CreateSource(connector.Table{Name: "datagen", Schema: schema, Options: connector.Options{
		"connector": "nexmark", "events.num": "20000", "first-event.rate": "1000", "base-time": "2024-01-01 00:00:00"}},
		connector.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for {
		b := types.NewBatch(1024, 4)
		err := r.Read(context.Background(), b, 1024)
		for _, row := range b.Rows {
			switch row.Vals[0].Int() {
			case 0:
				f := row.Vals[1].Elems()
				people = append(people, nxPerson{f[0].Int(), f[1].Str()})
			case 1:
				f := row.Vals[2].Elems()
				auctions = append(auctions, nxAuction{f[0].Int(), f[1].Int(), f[2].Int(), f[3].Int(), f[4].Int()})
			case 2:
				f := row.Vals[3].Elems()
				bids = append(bids, nxBid{f[0].Int(), f[1].Int(), f[2].Int()})
			}
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestNexmarkResults compares the final results of some Nexmark queries
// with the same questions answered in plain Go over the same events.
func TestNexmarkResults(t *testing.T) {
	people, auctions, bids := nexmarkEvents(t)
	state := map[int64]string{}
	for _, p := range people {
		state[p.id] = p.state
	}
	category := map[int64]int64{}
	for _, a := range auctions {
		category[a.id] = a.category
	}
	want := map[string]map[string]int{"q2": {}, "q3": {}, "q20": {}, "q4": {}}
	var q2, q3, q20 int
	for _, b := range bids {
		if b.auction%123 == 0 {
			q2++
		}
		if category[b.auction] == 10 {
			q20++
		}
	}
	finals := map[int64][]int64{} // category: closing prices
	for _, a := range auctions {
		if s := state[a.seller]; a.category == 10 && (s == "OR" || s == "ID" || s == "CA") {
			q3++
		}
		best, ok := int64(0), false
		for _, b := range bids {
			if b.auction == a.id && b.at >= a.opens && b.at <= a.expires {
				best, ok = max(best, b.price), true
			}
		}
		if ok {
			finals[a.category] = append(finals[a.category], best)
		}
	}
	for c, ps := range finals {
		var sum int64
		for _, p := range ps {
			sum += p
		}
		want["q4"][fmt.Sprintf("[%d, %d]", c, sum/int64(len(ps)))] = 1
	}
	ddl, err := os.ReadFile("testdata/nexmark/ddl.sql")
	if err != nil {
		t.Fatal(err)
	}
	setup := strings.NewReplacer("$EVENTS", "20000", "$RATE", "1000").Replace(string(ddl))
	counts := map[string]int{"q2": q2, "q3": q3, "q20": q20}
	for _, name := range []string{"q2", "q3", "q20", "q4"} {
		q, err := os.ReadFile("testdata/nexmark/" + name + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		e, err := sluice.Open(sluice.Options{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Run(context.Background(), name+".sql", []byte(setup+string(q))); err != nil {
			t.Fatal(err)
		}
		e.Close()
		got := map[string]int{}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")[1:]
		for _, l := range lines {
			switch l[:2] {
			case "+I", "+U":
				got[l[2:]]++
			case "-U", "-D":
				got[l[2:]]--
			}
		}
		n := 0
		for k, c := range got {
			if c == 0 {
				delete(got, k)
			}
			n += c
		}
		if name == "q4" {
			if fmt.Sprint(got) != fmt.Sprint(want["q4"]) {
				t.Errorf("q4: got %v, want %v", got, want["q4"])
			}
			continue
		}
		if n != counts[name] || n == 0 {
			t.Errorf("%s: %d rows, want %d", name, n, counts[name])
		}
	}
}

// BenchmarkNexmark runs each Nexmark query over SLUICE_NEXMARK_EVENTS
// events (default 1,000,000; 10,000 per second of event time) into a
// discarded print sink and reports events per second of the whole job:
//
//	GOMAXPROCS=1 go test . -run '^$' -bench Nexmark -benchtime 1x
func BenchmarkNexmark(b *testing.B) {
	events := os.Getenv("SLUICE_NEXMARK_EVENTS")
	if events == "" {
		events = "1000000"
	}
	n, err := strconv.Atoi(events)
	if err != nil {
		b.Fatal(err)
	}
	ddl, err := os.ReadFile("testdata/nexmark/ddl.sql")
	if err != nil {
		b.Fatal(err)
	}
	setup := strings.NewReplacer("$EVENTS", events, "$RATE", "10000").Replace(string(ddl))
	// SLUICE_NEXMARK_SET holds options to SET first, "key=value;...": to
	// compare a setting's effect (e.g. table.optimizer.reuse-source-enabled=false).
	if set := os.Getenv("SLUICE_NEXMARK_SET"); set != "" {
		for _, kv := range strings.Split(set, ";") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				b.Fatalf("SLUICE_NEXMARK_SET: %q is not key=value", kv)
			}
			setup = fmt.Sprintf("SET '%s' = '%s';\n", strings.TrimSpace(k), strings.TrimSpace(v)) + setup
		}
	}
	files, _ := filepath.Glob("testdata/nexmark/q*.sql")
	sort.Slice(files, func(i, j int) bool {
		return len(files[i]) < len(files[j]) || len(files[i]) == len(files[j]) && files[i] < files[j]
	})
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if _, ok := nexmarkUnsupported[name]; ok {
			continue
		}
		q, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			cpu := cputime.Seconds()
			for range b.N {
				e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Run(context.Background(), name+".sql", []byte(setup+string(q))); err != nil {
					b.Fatal(err)
				}
				e.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if c := cputime.Seconds() - cpu; c > 0 {
				b.ReportMetric(float64(n)*float64(b.N)/c, "events/cpu-s")
			}
		})
	}
}

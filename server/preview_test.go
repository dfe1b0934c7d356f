package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// sseEvent is an event of a server-sent event stream.
type sseEvent struct {
	name string
	data string
}

// startPreview posts a preview and returns the answer; the caller closes
// its body.
func (ts *testServer) startPreview(ctx context.Context, body any) *http.Response {
	ts.t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", ts.url+"/v1/preview", bytes.NewReader(b))
	if err != nil {
		ts.t.Fatal(err)
	}
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp
}

// events reads the events of a stream, each sent to out, until it ends.
func readEvents(t *testing.T, resp *http.Response, out chan<- sseEvent) {
	defer close(out)
	sc := bufio.NewScanner(resp.Body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out <- ev
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Errorf("unexpected line %q in the stream", line)
		}
	}
}

// preview runs a preview to its end and returns its events.
func (ts *testServer) preview(body any) []sseEvent {
	ts.t.Helper()
	resp := ts.startPreview(context.Background(), body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		ts.t.Fatalf("preview: status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		ts.t.Fatalf("preview: Content-Type %q", ct)
	}
	ch := make(chan sseEvent)
	go readEvents(ts.t, resp, ch)
	var out []sseEvent
	for ev := range ch {
		out = append(out, ev)
	}
	ts.noJobs()
	return out
}

// noJobs checks that no job runs (a preview's job is gone once its
// stream ended, or soon after its client went away).
func (ts *testServer) noJobs() {
	ts.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(ts.s.engine.Jobs()) > 0 {
		if time.Now().After(deadline) {
			ts.t.Fatalf("jobs still running: %d", len(ts.s.engine.Jobs()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkEnd checks that evs are a columns event, rows, and an end event
// with reason, and returns the rows.
func checkEnd(t *testing.T, evs []sseEvent, columns, reason string) []previewRow {
	t.Helper()
	if len(evs) < 2 || evs[0].name != "columns" || evs[len(evs)-1].name != "end" {
		t.Fatalf("events %v: want columns, rows, end", evs)
	}
	if evs[0].data != columns {
		t.Errorf("columns %s, want %s", evs[0].data, columns)
	}
	var rows []previewRow
	for _, ev := range evs[1 : len(evs)-1] {
		if ev.name != "row" {
			t.Fatalf("event %v amid the rows", ev)
		}
		var r previewRow
		if err := json.Unmarshal([]byte(ev.data), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	var end struct {
		Rows   int    `json:"rows"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(evs[len(evs)-1].data), &end); err != nil {
		t.Fatal(err)
	}
	if end.Reason != reason || end.Rows != len(rows) {
		t.Errorf("end %+v after %d rows, want reason %s", end, len(rows), reason)
	}
	return rows
}

func TestPreview(t *testing.T) {
	ts := startServer(t, t.TempDir(), false, "")
	// A catalog table can be previewed.
	ts.must("POST", "/v1/catalog", sqlRequest{`CREATE TABLE seq (id BIGINT, name STRING, ok BOOLEAN, at TIMESTAMP(3), price DECIMAL(5, 2))
WITH ('connector' = 'datagen', 'number-of-rows' = '4', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4');`}, http.StatusOK, nil)

	t.Run("bounded", func(t *testing.T) {
		evs := ts.preview(previewRequest{SQL: `SELECT id, CASE WHEN id = 2 THEN NULL ELSE 'n' || CAST(id AS STRING) END AS name, id > 2 AS big,
  TIMESTAMP '2024-01-02 03:04:05.678' AS at, CAST(id AS DECIMAL(5, 2)) / 4 AS q FROM seq`})
		rows := checkEnd(t, evs, `{"columns":[{"name":"id","type":"BIGINT"},{"name":"name","type":"STRING"},{"name":"big","type":"BOOLEAN"},`+
			`{"name":"at","type":"TIMESTAMP(3) NOT NULL"},{"name":"q","type":"DECIMAL(16, 13)"}]}`, endFinished)
		var got []string
		for _, ev := range evs[1 : len(evs)-1] {
			got = append(got, ev.data)
		}
		_ = rows
		want := []string{
			`{"kind":"+I","values":[1,"n1",false,"2024-01-02 03:04:05.678",0.2500000000000]}`,
			`{"kind":"+I","values":[2,null,false,"2024-01-02 03:04:05.678",0.5000000000000]}`,
			`{"kind":"+I","values":[3,"n3",true,"2024-01-02 03:04:05.678",0.7500000000000]}`,
			`{"kind":"+I","values":[4,"n4",true,"2024-01-02 03:04:05.678",1.0000000000000]}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("changelog", func(t *testing.T) {
		evs := ts.preview(previewRequest{SQL: `SELECT id % 2 AS k, COUNT(*) AS n FROM seq GROUP BY id % 2`})
		rows := checkEnd(t, evs, `{"columns":[{"name":"k","type":"INT"},{"name":"n","type":"BIGINT NOT NULL"}]}`, endFinished)
		// Applied in order, the changelog ends with a count of 2 per key,
		// and retracts what it updates.
		counts := map[float64]float64{}
		kinds := map[string]int{}
		for _, r := range rows {
			kinds[r.Kind]++
			k, n := r.Values[0].(float64), r.Values[1].(float64)
			switch r.Kind {
			case "+I", "+U":
				counts[k] = n
			case "-U", "-D":
				if counts[k] != n {
					t.Errorf("%s %v retracts a count of %v", r.Kind, r.Values, counts[k])
				}
				delete(counts, k)
			}
		}
		if len(counts) != 2 || counts[0] != 2 || counts[1] != 2 || kinds["-U"] == 0 || kinds["-U"] != kinds["+U"] {
			t.Errorf("rows %v: counts %v", rows, counts)
		}
	})

	unbounded := `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '%s');
SET 'parallelism.default' = '2';
SELECT id FROM gen;`
	t.Run("max_rows", func(t *testing.T) {
		evs := ts.preview(previewRequest{SQL: strings.Replace(unbounded, "%s", "1000", 1), MaxRows: 7})
		if rows := checkEnd(t, evs, `{"columns":[{"name":"id","type":"BIGINT"}]}`, endMaxRows); len(rows) != 7 {
			t.Errorf("%d rows, want 7", len(rows))
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// At 1 row a second, 10,000 rows take longer than 200 ms.
		evs := ts.preview(previewRequest{SQL: strings.Replace(unbounded, "%s", "1", 1), MaxRows: maxPreviewRows, TimeoutMS: 200})
		checkEnd(t, evs, `{"columns":[{"name":"id","type":"BIGINT"}]}`, endTimeout)
	})

	t.Run("run-time error", func(t *testing.T) {
		evs := ts.preview(previewRequest{SQL: `CREATE TABLE s (x STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.x.length' = '4');
SELECT CAST(x AS INT) AS n FROM s;`})
		last := evs[len(evs)-1]
		if evs[0].name != "columns" || last.name != "error" || !strings.Contains(last.data, "cannot cast") {
			t.Errorf("events %v: want columns, then error with the cast's message", evs)
		}
	})

	t.Run("bad SQL", func(t *testing.T) {
		for _, tc := range []struct {
			sql       string
			line, col int
			msg       string
		}{
			{"SELECT nope FROM seq", 1, 8, "nope"},
			{"SELECT id FROM seq;\nINSERT INTO seq SELECT * FROM seq;", 2, 1, "DDL, SET and one SELECT"},
			{"SELECT id FROM seq;\nSELECT id FROM seq;", 2, 1, "one SELECT"},
			{"SET 'state.dir' = '/tmp';\nSELECT id FROM seq;", 1, 1, "keeps no state"},
			{"CREATE TABLE t (a INT) WITH ('connector' = 'datagen');", 0, 0, "no SELECT"},
			{"SELEC 1", 1, 1, ""},
		} {
			e := ts.mustFail("POST", "/v1/preview", previewRequest{SQL: tc.sql}, http.StatusBadRequest, codeBadSQL)
			if e.Line != tc.line || e.Column != tc.col || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("%q: error %+v, want %d:%d %q", tc.sql, e, tc.line, tc.col, tc.msg)
			}
		}
		ts.mustFail("POST", "/v1/preview", previewRequest{SQL: "SELECT id FROM seq", MaxRows: maxPreviewRows + 1}, http.StatusBadRequest, codeBadRequest)
		ts.mustFail("POST", "/v1/preview", previewRequest{SQL: "SELECT id FROM seq", TimeoutMS: 1 << 62}, http.StatusBadRequest, codeBadRequest)
		ts.noJobs()
	})

	t.Run("client gone", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		resp := ts.startPreview(ctx, previewRequest{SQL: strings.Replace(unbounded, "%s", "100", 1), MaxRows: maxPreviewRows, TimeoutMS: 60000})
		defer resp.Body.Close()
		ch := make(chan sseEvent)
		go readEvents(t, resp, ch)
		for range 2 { // the columns and a row
			if _, ok := <-ch; !ok {
				t.Fatal("the stream ended")
			}
		}
		if jobs := ts.s.engine.Jobs(); len(jobs) != 1 || jobs[0].Name != previewJob {
			t.Fatalf("jobs running: %v, want the preview's", jobs)
		}
		// A job published meanwhile runs under its own name, whatever
		// the preview's is.
		ts.must("POST", "/v1/jobs", createRequest{Name: "select", SQL: `CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
INSERT INTO hole SELECT id FROM g;`}, http.StatusCreated, nil)
		var names []string
		for _, j := range ts.s.engine.Jobs() {
			names = append(names, j.Name)
		}
		if slices.Sort(names); !slices.Equal(names, []string{previewJob, "select"}) {
			t.Errorf("jobs running: %v, want the preview's and select", names)
		}
		ts.must("DELETE", "/v1/jobs/select", nil, http.StatusNoContent, nil)
		cancel()
		for range ch {
		}
		ts.noJobs()
	})

	// Nothing of the previews is kept: no job, no state.
	var list struct {
		Jobs []jobJSON `json:"jobs"`
	}
	ts.must("GET", "/v1/jobs", nil, http.StatusOK, &list)
	if len(list.Jobs) > 0 {
		t.Errorf("jobs %v", list.Jobs)
	}
}

// A preview needs a token when auth is on.
func TestPreviewAuth(t *testing.T) {
	dir := t.TempDir()
	token, err := CreateToken(dir, "ci")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir, true, "")
	ts.mustFail("POST", "/v1/preview", previewRequest{SQL: "SELECT 1"}, http.StatusUnauthorized, codeUnauthorized)
	ts.token = token
	evs := ts.preview(previewRequest{SQL: "SELECT 1 AS one"})
	checkEnd(t, evs, `{"columns":[{"name":"one","type":"INT NOT NULL"}]}`, endFinished)
}

package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The shapes of the answers of Flink's SQL gateway API (v2, and v1 to
// v4: their bodies are the same), as Flink's published description
// (docs/static/generated/rest_v2_sql_gateway.yml) and its serializers
// (FetchResultsResponseBodySerializer, ResultInfoSerializer,
// LogicalTypeJsonSerializer, ColumnInfo) give them. Flink's client reads
// them with Jackson refusing unknown fields and requiring its creators'
// fields: an object here has exactly its keys, those ending in "?"
// optional.
//
// A spec is "string", "boolean", "number", "string|null", "any", an
// enum (the values a string takes), a pattern (a string matching it), an
// obj, a list (an array of a spec) or a dict (an object of any keys, of
// a spec).
type (
	obj  map[string]any
	list struct{ of any }
	dict struct{ of any }
	enum []string
	pat  string
)

var (
	flinkErrorBody    = obj{"errors": list{"string"}}
	flinkOpenSession  = obj{"sessionHandle": pat(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)}
	flinkSessionConf  = obj{"properties": dict{"string"}}
	flinkCloseSession = obj{"status": enum{"CLOSED"}}
	flinkEmpty        = obj{}
	flinkExecute      = obj{"operationHandle": pat(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)}
	flinkOpStatus     = obj{"status": enum{"INITIALIZED", "PENDING", "RUNNING", "FINISHED", "CANCELED", "CLOSED", "ERROR", "TIMEOUT"}}
	flinkAPIVersions  = obj{"versions": list{enum{"V1", "V2", "V3", "V4"}}}
	flinkInfo         = obj{"productName": "string", "version": "string"}
	flinkComplete     = obj{"candidates": list{"string"}}
	flinkLogicalType  = obj{
		"type": enum{"CHAR", "VARCHAR", "BOOLEAN", "BINARY", "VARBINARY", "DECIMAL", "TINYINT", "SMALLINT", "INTEGER", "BIGINT",
			"FLOAT", "DOUBLE", "DATE", "TIME_WITHOUT_TIME_ZONE", "TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_TIME_ZONE",
			"TIMESTAMP_WITH_LOCAL_TIME_ZONE", "INTERVAL_YEAR_MONTH", "INTERVAL_DAY_TIME", "ARRAY", "MULTISET", "MAP", "ROW",
			"DISTINCT_TYPE", "STRUCTURED_TYPE", "NULL", "RAW", "SYMBOL", "UNRESOLVED"},
		"nullable?": "boolean", "length?": "number", "precision?": "number", "scale?": "number",
		"fractionalPrecision?": "number", "resolution?": "string",
		"elementType?": "any", "keyType?": "any", "valueType?": "any", "fields?": "any",
	}
	flinkFetch = obj{
		"resultType":    enum{"NOT_READY", "PAYLOAD", "EOS"},
		"isQueryResult": "boolean",
		"jobID?":        pat(`^[0-9a-f]{32}$`),
		"resultKind":    enum{"SUCCESS", "SUCCESS_WITH_CONTENT"},
		"results": obj{
			"columns":   list{obj{"name": "string", "logicalType": flinkLogicalType, "comment": "string|null"}},
			"rowFormat": enum{"JSON", "PLAIN_TEXT"},
			"data":      list{obj{"kind": enum{"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"}, "fields": list{"any"}}},
		},
		"nextResultUri?": pat(`^/v[1-4]/sessions/[0-9a-f-]{36}/operations/[0-9a-f-]{36}/result/[0-9]+(\?rowFormat=(JSON|PLAIN_TEXT))?$`),
	}
)

// conform reports where v does not have the shape spec.
func conform(t *testing.T, at string, v any, spec any) {
	t.Helper()
	switch sp := spec.(type) {
	case string:
		ok := true
		switch sp {
		case "string":
			_, ok = v.(string)
		case "boolean":
			_, ok = v.(bool)
		case "number":
			_, ok = v.(json.Number)
		case "string|null":
			_, str := v.(string)
			ok = str || v == nil
		}
		if !ok {
			t.Errorf("%s: %#v is not a %s", at, v, sp)
		}
	case enum:
		if s, ok := v.(string); !ok || !slices.Contains(sp, s) {
			t.Errorf("%s: %#v is not one of %v", at, v, sp)
		}
	case pat:
		if s, ok := v.(string); !ok || !regexp.MustCompile(string(sp)).MatchString(s) {
			t.Errorf("%s: %#v does not match %s", at, v, sp)
		}
	case list:
		a, ok := v.([]any)
		if !ok {
			t.Errorf("%s: %#v is not an array", at, v)
			return
		}
		for i, e := range a {
			conform(t, fmt.Sprintf("%s[%d]", at, i), e, sp.of)
		}
	case dict:
		m, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: %#v is not an object", at, v)
			return
		}
		for k, e := range m {
			conform(t, at+"."+k, e, sp.of)
		}
	case obj:
		m, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: %#v is not an object", at, v)
			return
		}
		for k := range m {
			if _, known := sp[k]; !known {
				if _, opt := sp[k+"?"]; !opt {
					t.Errorf("%s: field %q is not in Flink's body (its client refuses it)", at, k)
				}
			}
		}
		for k, sub := range sp {
			name, optional := strings.CutSuffix(k, "?")
			e, ok := m[name]
			if !ok {
				if !optional {
					t.Errorf("%s: no field %q", at, name)
				}
				continue
			}
			conform(t, at+"."+name, e, sub)
		}
	default:
		t.Fatalf("bad spec %#v", spec)
	}
}

// gw sends a request to the gateway, checks its status and the shape of
// the answer, and returns the answer.
func (ts *testServer) gw(method, path string, body any, status int, shape obj) map[string]any {
	ts.t.Helper()
	code, b := ts.call(method, path, body)
	if code != status {
		ts.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, status, b)
	}
	// Numbers stay as written: a DECIMAL's digits are part of its value.
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		ts.t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	conform(ts.t, method+" "+path, out, shape)
	return out
}

// gwFail sends a request that must fail with status, and returns its
// one error message.
func (ts *testServer) gwFail(method, path string, body any, status int) string {
	ts.t.Helper()
	out := ts.gw(method, path, body, status, flinkErrorBody)
	errs := out["errors"].([]any)
	if len(errs) == 0 {
		ts.t.Fatalf("%s %s: no error message", method, path)
	}
	return errs[0].(string)
}

func (ts *testServer) openSession(v string, props map[string]string) string {
	ts.t.Helper()
	return ts.gw("POST", "/"+v+"/sessions", map[string]any{"sessionName": "test", "properties": props}, 200, flinkOpenSession)["sessionHandle"].(string)
}

// execute submits a statement and returns its operation's path.
func (ts *testServer) execute(v, sh, stmt string) string {
	ts.t.Helper()
	oh := ts.gw("POST", "/"+v+"/sessions/"+sh+"/statements", map[string]any{"statement": stmt}, 200, flinkExecute)["operationHandle"].(string)
	return "/" + v + "/sessions/" + sh + "/operations/" + oh
}

// result is what the pages of an operation held.
type result struct {
	columns       []any
	rows          []string // each {"kind", "fields"} as JSON
	kind, jobID   string
	isQuery       bool
	pages, nonEOS int
}

// fetchAll fetches the pages of an operation until EOS, following
// nextResultUri, and checks every page's shape.
func (ts *testServer) fetchAll(op, format string) result {
	ts.t.Helper()
	var res result
	uri := op + "/result/0?rowFormat=" + format
	for deadline := time.Now().Add(time.Minute); ; {
		page := ts.gw("GET", uri, nil, 200, flinkFetch)
		res.pages++
		results := page["results"].(map[string]any)
		if res.columns == nil {
			res.columns = results["columns"].([]any)
			res.kind, res.isQuery = page["resultKind"].(string), page["isQueryResult"].(bool)
			res.jobID, _ = page["jobID"].(string)
		}
		if results["rowFormat"] != format {
			ts.t.Errorf("rowFormat %v, want %s", results["rowFormat"], format)
		}
		data := results["data"].([]any)
		if len(data) > gatewayBufferRows {
			ts.t.Errorf("a page of %d rows: more than the %d a query buffers", len(data), gatewayBufferRows)
		}
		for _, r := range data {
			b, _ := json.Marshal(r)
			res.rows = append(res.rows, string(b))
		}
		next, ok := page["nextResultUri"].(string)
		if page["resultType"] == "EOS" {
			if ok {
				ts.t.Errorf("EOS with a nextResultUri %s", next)
			}
			return res
		}
		res.nonEOS++
		if !ok {
			ts.t.Fatalf("a %v page without nextResultUri", page["resultType"])
		}
		uri = next
		if time.Now().After(deadline) {
			ts.t.Fatalf("no EOS after a minute: %d rows", len(res.rows))
		}
	}
}

// run executes a statement and fetches its whole result.
func (ts *testServer) run(v, sh, stmt, format string) result {
	ts.t.Helper()
	return ts.fetchAll(ts.execute(v, sh, stmt), format)
}

func columnsJSON(t *testing.T, cols []any) string {
	t.Helper()
	b, err := json.Marshal(cols)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gatewayQueries returns how many gateway queries run in the server's
// engine.
func (ts *testServer) gatewayQueries() int {
	n := 0
	for _, j := range ts.s.engine.Jobs() {
		if strings.HasPrefix(j.Name, gatewayQueryJob) {
			n++
		}
	}
	return n
}

// waitNoQueries waits until no gateway query runs (a guard of a minute).
func (ts *testServer) waitNoQueries() {
	ts.t.Helper()
	for deadline := time.Now().Add(time.Minute); ts.gatewayQueries() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			ts.t.Fatalf("%d gateway queries still run", ts.gatewayQueries())
		}
	}
}

const okResult = `[{"fields":["OK"],"kind":"INSERT"}]`
const okColumns = `[{"comment":null,"logicalType":{"length":2147483647,"nullable":true,"type":"VARCHAR"},"name":"result"}]`

func TestGateway(t *testing.T) {
	dir := t.TempDir()
	token, err := CreateToken(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir, true, token)
	out := filepath.Join(t.TempDir(), "out")

	t.Run("versions and info", func(t *testing.T) {
		v := ts.gw("GET", "/v1/api_versions", nil, 200, flinkAPIVersions)
		if fmt.Sprint(v["versions"]) != "[V1 V2]" {
			t.Errorf("versions %v", v["versions"])
		}
		ts.gw("GET", "/v2/info", nil, 200, flinkInfo)
		if msg := ts.gwFail("GET", "/v9/info", nil, 404); !strings.Contains(msg, "v1, v2, v3, v4") {
			t.Errorf("an unknown version: %s", msg)
		}
	})

	t.Run("auth", func(t *testing.T) {
		for _, tok := range []string{"", "sluice_wrong"} {
			code, b := ts.callWith(tok, "POST", "/v2/sessions", map[string]any{})
			var e map[string]any
			json.Unmarshal(b, &e)
			conform(t, "401", e, flinkErrorBody)
			if code != 401 {
				t.Errorf("token %q: %d %s", tok, code, b)
			}
		}
	})

	sh := ts.openSession("v2", map[string]string{"parallelism.default": "1", "sql-client.execution.result-mode": "tableau"})
	sp := "/v2/sessions/" + sh

	t.Run("session", func(t *testing.T) {
		props := ts.gw("GET", sp, nil, 200, flinkSessionConf)["properties"].(map[string]any)
		if props["parallelism.default"] != "1" || props["sql-client.execution.result-mode"] != "tableau" {
			t.Errorf("properties %v", props)
		}
		ts.gw("POST", sp+"/heartbeat", nil, 200, flinkEmpty)
		ts.gw("POST", sp+"/configure-session", map[string]any{"statement": `CREATE TABLE seq (id BIGINT, name STRING, ok BOOLEAN, at TIMESTAMP(3), price DECIMAL(5, 2))
WITH ('connector' = 'datagen', 'number-of-rows' = '2500', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '2500')`}, 200, flinkEmpty)
		ts.gw("POST", sp+"/configure-session", map[string]any{"statement": "SET 'table.local-time-zone' = 'Asia/Shanghai'"}, 200, flinkEmpty)
		if msg := ts.gwFail("POST", sp+"/configure-session", map[string]any{"statement": "SELECT 1"}, 400); !strings.Contains(msg, "configure-session takes DDL") {
			t.Errorf("a SELECT to configure-session: %s", msg)
		}
		props = ts.gw("GET", sp, nil, 200, flinkSessionConf)["properties"].(map[string]any)
		if props["table.local-time-zone"] != "Asia/Shanghai" {
			t.Errorf("properties after SET %v", props)
		}
		// The session's table is its own: not in the server's catalog.
		var cat catalogJSON
		ts.must("GET", "/v1/catalog", nil, 200, &cat)
		if len(cat.Tables) != 0 {
			t.Errorf("the catalog has %v", cat.Tables)
		}
	})

	t.Run("DDL and SET", func(t *testing.T) {
		res := ts.run("v2", sh, "CREATE VIEW small AS SELECT id, name FROM seq WHERE id <= 3", "JSON")
		if got := strings.Join(res.rows, ","); "["+got+"]" != okResult || columnsJSON(t, res.columns) != okColumns ||
			res.kind != "SUCCESS" || res.isQuery || res.jobID != "" {
			t.Errorf("CREATE VIEW: %+v %s", res, columnsJSON(t, res.columns))
		}
		res = ts.run("v2", sh, "SET 'pipeline.name' = 'gw-insert';", "PLAIN_TEXT")
		if "["+strings.Join(res.rows, ",")+"]" != okResult || res.kind != "SUCCESS" {
			t.Errorf("SET: %+v", res)
		}
		res = ts.run("v2", sh, "SET", "PLAIN_TEXT")
		if res.kind != "SUCCESS_WITH_CONTENT" || !slices.Contains(res.rows, `{"fields":["pipeline.name","gw-insert"],"kind":"INSERT"}`) {
			t.Errorf("SET listing: %+v", res)
		}
		res = ts.run("v2", sh, "SHOW TABLES", "JSON")
		if cols := columnsJSON(t, res.columns); !strings.Contains(cols, `"name":"table name"`) || strings.Join(res.rows, ",") != `{"fields":["seq"],"kind":"INSERT"}` {
			t.Errorf("SHOW TABLES: %s %v", cols, res.rows)
		}
	})

	t.Run("bounded SELECT", func(t *testing.T) {
		res := ts.run("v2", sh, `SELECT id, CASE WHEN id = 2 THEN NULL ELSE 'n' || CAST(id AS STRING) END AS name, id > 2 AS big,
  TIMESTAMP '2024-01-02 03:04:05.678' AS at, CAST(id AS DECIMAL(5, 2)) / 4 AS q FROM small`, "JSON")
		wantCols := `[{"comment":null,"logicalType":{"nullable":true,"type":"BIGINT"},"name":"id"},` +
			`{"comment":null,"logicalType":{"length":2147483647,"nullable":true,"type":"VARCHAR"},"name":"name"},` +
			`{"comment":null,"logicalType":{"nullable":true,"type":"BOOLEAN"},"name":"big"},` +
			`{"comment":null,"logicalType":{"nullable":false,"precision":3,"type":"TIMESTAMP_WITHOUT_TIME_ZONE"},"name":"at"},` +
			`{"comment":null,"logicalType":{"nullable":true,"precision":16,"scale":13,"type":"DECIMAL"},"name":"q"}]`
		if got := columnsJSON(t, res.columns); got != wantCols {
			t.Errorf("columns\n%s\nwant\n%s", got, wantCols)
		}
		want := []string{
			`{"fields":[1,"n1",false,"2024-01-02T03:04:05.678",0.2500000000000],"kind":"INSERT"}`,
			`{"fields":[2,null,false,"2024-01-02T03:04:05.678",0.5000000000000],"kind":"INSERT"}`,
			`{"fields":[3,"n3",true,"2024-01-02T03:04:05.678",0.7500000000000],"kind":"INSERT"}`,
		}
		if !slices.Equal(res.rows, want) {
			t.Errorf("rows\n%s\nwant\n%s", strings.Join(res.rows, "\n"), strings.Join(want, "\n"))
		}
		if !res.isQuery || res.kind != "SUCCESS_WITH_CONTENT" || res.jobID == "" {
			t.Errorf("a query's result: %+v", res)
		}

		// PLAIN_TEXT: the values as Flink's client prints them; a
		// TIMESTAMP_LTZ in the session's time zone.
		res = ts.run("v2", sh, `SELECT id, CAST(NULL AS STRING) AS nothing, CAST(id AS DECIMAL(5, 2)) AS d, TO_TIMESTAMP_LTZ(0, 3) AS ltz, id = 1 AS b
FROM small WHERE id = 1`, "PLAIN_TEXT")
		if got := strings.Join(res.rows, "\n"); got != `{"fields":["1",null,"1.00","1970-01-01 08:00:00.000","TRUE"],"kind":"INSERT"}` {
			t.Errorf("PLAIN_TEXT rows %s", got)
		}
	})

	t.Run("types", func(t *testing.T) {
		// Nested types as Flink describes them, and their values in
		// both row formats.
		const sql = `SELECT ARRAY[1, 2] AS a, MAP['k', 1] AS m, ROW(1, 'x') AS r, CAST('ab' AS BYTES) AS b,
  DATE '2024-01-02' AS d, TIME '03:04:05' AS t, TO_TIMESTAMP_LTZ(0, 3) AS ltz`
		wantCols := `[{"comment":null,"logicalType":{"elementType":{"nullable":false,"type":"INTEGER"},"nullable":false,"type":"ARRAY"},"name":"a"},` +
			`{"comment":null,"logicalType":{"keyType":{"length":1,"nullable":false,"type":"CHAR"},"nullable":false,"type":"MAP","valueType":{"nullable":false,"type":"INTEGER"}},"name":"m"},` +
			`{"comment":null,"logicalType":{"fields":[{"fieldType":{"nullable":false,"type":"INTEGER"},"name":"EXPR$0"},{"fieldType":{"length":1,"nullable":false,"type":"CHAR"},"name":"EXPR$1"}],"nullable":false,"type":"ROW"},"name":"r"},` +
			`{"comment":null,"logicalType":{"length":2147483647,"nullable":true,"type":"VARBINARY"},"name":"b"},` +
			`{"comment":null,"logicalType":{"nullable":false,"type":"DATE"},"name":"d"},` +
			`{"comment":null,"logicalType":{"nullable":false,"precision":0,"type":"TIME_WITHOUT_TIME_ZONE"},"name":"t"},` +
			`{"comment":null,"logicalType":{"nullable":true,"precision":3,"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE"},"name":"ltz"}]`
		for format, want := range map[string]string{
			"JSON":       `{"fields":[[1,2],{"k":1},{"EXPR$0":1,"EXPR$1":"x"},"YWI=","2024-01-02","03:04:05","1970-01-01T00:00:00Z"],"kind":"INSERT"}`,
			"PLAIN_TEXT": `{"fields":["[1, 2]","{k=1}","(1, x)","x'6162'","2024-01-02","03:04:05","1970-01-01 08:00:00.000"],"kind":"INSERT"}`,
		} {
			res := ts.run("v2", sh, sql, format)
			if got := columnsJSON(t, res.columns); got != wantCols {
				t.Errorf("%s: columns\n%s\nwant\n%s", format, got, wantCols)
			}
			if got := strings.Join(res.rows, "\n"); got != want {
				t.Errorf("%s: rows\n%s\nwant\n%s", format, got, want)
			}
		}
	})

	t.Run("ruleset", func(t *testing.T) {
		// A ruleset is DDL of the session, as a view is.
		res := ts.run("v2", sh, "CREATE RULESET few ON small (RULE first WHEN id = 1 SEVERITY 'high', RULE odd WHEN id % 2 = 1)", "JSON")
		if "["+strings.Join(res.rows, ",")+"]" != okResult {
			t.Fatalf("CREATE RULESET: %v", res.rows)
		}
		res = ts.run("v2", sh, "SELECT id, matched_rules, alert_severity FROM few", "JSON")
		want := []string{
			`{"fields":[1,["first","odd"],"high"],"kind":"INSERT"}`,
			`{"fields":[3,["odd"],"medium"],"kind":"INSERT"}`,
		}
		if !slices.Equal(res.rows, want) {
			t.Errorf("alerts\n%s\nwant\n%s", strings.Join(res.rows, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("pages", func(t *testing.T) {
		// 2,500 rows come in pages of at most 1,000 (what a query
		// buffers), so in 3 or more, each id once and in order.
		res := ts.run("v2", sh, "SELECT id FROM seq", "JSON")
		if len(res.rows) != 2500 || res.nonEOS < 3 {
			t.Fatalf("%d rows in %d pages", len(res.rows), res.nonEOS)
		}
		for i, r := range res.rows {
			if want := fmt.Sprintf(`{"fields":[%d],"kind":"INSERT"}`, i+1); r != want {
				t.Fatalf("row %d: %s, want %s", i, r, want)
			}
		}
		// A page can be asked for again (a client's retry), the one
		// before it too; another token is an error.
		op := ts.execute("v2", sh, "SELECT id FROM small")
		first := ts.gw("GET", op+"/result/0", nil, 200, flinkFetch)
		again := ts.gw("GET", op+"/result/0", nil, 200, flinkFetch)
		if fmt.Sprint(first) != fmt.Sprint(again) {
			t.Errorf("token 0 twice:\n%v\n%v", first, again)
		}
		if msg := ts.gwFail("GET", op+"/result/5", nil, 400); !strings.Contains(msg, "Expecting token to be 1 or 0, but found 5") {
			t.Errorf("a token out of turn: %s", msg)
		}
		ts.gwFail("GET", op+"/result/0?rowFormat=XML", nil, 400)
		ts.gw("DELETE", op+"/close", nil, 200, obj{"status": enum{"CLOSED"}})
		ts.gwFail("GET", op+"/status", nil, 404)
	})

	t.Run("changelog", func(t *testing.T) {
		res := ts.run("v2", sh, "SELECT id % 2 AS k, COUNT(*) AS n FROM small GROUP BY id % 2", "JSON")
		counts := map[float64]float64{}
		kinds := map[string]int{}
		for _, r := range res.rows {
			var row struct {
				Kind   string
				Fields []float64
			}
			json.Unmarshal([]byte(r), &row)
			kinds[row.Kind]++
			switch row.Kind {
			case "INSERT", "UPDATE_AFTER":
				counts[row.Fields[0]] = row.Fields[1]
			case "UPDATE_BEFORE", "DELETE":
				delete(counts, row.Fields[0])
			}
		}
		if len(counts) != 2 || counts[0] != 1 || counts[1] != 2 || kinds["UPDATE_BEFORE"] == 0 {
			t.Errorf("changelog %v: counts %v", res.rows, counts)
		}
	})

	t.Run("unbounded SELECT", func(t *testing.T) {
		ts.gw("POST", sp+"/configure-session", map[string]any{"statement": `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200')`}, 200, flinkEmpty)
		op := ts.execute("v2", sh, "SELECT id FROM gen")
		rows, uri := 0, op+"/result/0?rowFormat=JSON"
		for pages := 0; rows < 5; pages++ {
			page := ts.gw("GET", uri, nil, 200, flinkFetch)
			if page["resultType"] != "PAYLOAD" {
				t.Fatalf("page %d of an unbounded query: %v", pages, page["resultType"])
			}
			rows += len(page["results"].(map[string]any)["data"].([]any))
			uri = page["nextResultUri"].(string)
		}
		if st := ts.gw("GET", op+"/status", nil, 200, flinkOpStatus)["status"]; st != "FINISHED" {
			t.Errorf("status %v while it runs (Flink's: FINISHED once the job is submitted)", st)
		}
		if st := ts.gw("POST", op+"/cancel", nil, 200, flinkOpStatus)["status"]; st != "CANCELED" {
			t.Errorf("status %v after cancel", st)
		}
		if n := ts.gatewayQueries(); n != 0 {
			t.Errorf("%d queries run after cancel", n)
		}
		ts.gwFail("GET", uri, nil, 400)
		ts.gw("DELETE", op+"/close", nil, 200, flinkOpStatus)
		ts.gwFail("GET", op+"/status", nil, 404)
	})

	t.Run("back pressure", func(t *testing.T) {
		ts.gw("POST", sp+"/configure-session", map[string]any{"statement": `CREATE TABLE fast (id BIGINT) WITH ('connector' = 'datagen')`}, 200, flinkEmpty)
		op := ts.execute("v2", sh, "SELECT id FROM fast")
		id := op[strings.LastIndex(op, "/")+1:]
		o := ts.s.gw.get(sh).op(id)
		// Nobody fetches: the query fills its buffer and waits.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			o.mu.Lock()
			n := len(o.rows)
			o.mu.Unlock()
			if n == gatewayBufferRows {
				break
			}
			if n > gatewayBufferRows || time.Now().After(deadline) {
				t.Fatalf("%d rows buffered, want %d", n, gatewayBufferRows)
			}
		}
		page := ts.gw("GET", op+"/result/0", nil, 200, flinkFetch)
		if n := len(page["results"].(map[string]any)["data"].([]any)); n != gatewayBufferRows {
			t.Errorf("a page of %d rows from a full buffer, want %d", n, gatewayBufferRows)
		}
		ts.gw("DELETE", op+"/close", nil, 200, flinkOpStatus)
		if n := ts.gatewayQueries(); n != 0 {
			t.Errorf("%d queries run after close", n)
		}
	})

	t.Run("INSERT", func(t *testing.T) {
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		ts.run("v2", sh, fmt.Sprintf(`CREATE TABLE sink (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s/out.json', 'format' = 'json')`, out), "JSON")
		res := ts.run("v2", sh, "INSERT INTO sink SELECT id FROM seq WHERE id <= 10", "JSON")
		want := fmt.Sprintf(`{"fields":["%s"],"kind":"INSERT"}`, res.jobID)
		if res.jobID == "" || len(res.rows) != 1 || res.rows[0] != want || res.kind != "SUCCESS_WITH_CONTENT" || res.isQuery ||
			columnsJSON(t, res.columns) != `[{"comment":null,"logicalType":{"length":2147483647,"nullable":true,"type":"VARCHAR"},"name":"job id"}]` {
			t.Fatalf("INSERT: %+v %s", res, columnsJSON(t, res.columns))
		}
		// The job is the server's, named by 'pipeline.name', with the
		// session's options and DDL, and the Flink job ID as a label.
		j := ts.waitJob("gw-insert", statusFinished)
		if j.Labels[gatewayJobLabel] != res.jobID || !strings.Contains(j.SQL, "SET 'parallelism.default' = '1';") ||
			!strings.Contains(j.SQL, "CREATE TABLE seq") || strings.Contains(j.SQL, "sql-client") || strings.Contains(j.SQL, "pipeline.name") {
			t.Errorf("job %+v", j)
		}
		got := outputIDs(t, out)
		if len(got) != 10 {
			t.Errorf("output %v", got)
		}
		// Without 'pipeline.name', the job is named as the engine names
		// it, and the start of its ID.
		ts.run("v2", sh, "RESET 'pipeline.name'", "JSON")
		ts.run("v2", sh, "CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole')", "JSON")
		res = ts.run("v2", sh, "INSERT INTO hole SELECT id FROM seq", "JSON")
		ts.waitJob("insert-into-hole-"+res.jobID[:8], statusFinished)
		// A second job of the same name is refused, as POST /v1/jobs
		// refuses it.
		ts.run("v2", sh, "SET 'pipeline.name' = 'gw-insert'", "JSON")
		if msg := ts.gwFail("POST", sp+"/statements", map[string]any{"statement": "INSERT INTO hole SELECT id FROM seq"}, 409); !strings.Contains(msg, "exists already") {
			t.Errorf("a taken name: %s", msg)
		}
	})

	t.Run("errors", func(t *testing.T) {
		msg := ts.gwFail("POST", sp+"/statements", map[string]any{"statement": "SELECT id,\n  nope FROM seq"}, 400)
		if !strings.Contains(msg, "statement.sql:2:3: ") || !strings.Contains(msg, "nope") || !strings.Contains(msg, "\n  ^") {
			t.Errorf("an unknown column: %q", msg)
		}
		if msg := ts.gwFail("POST", sp+"/statements", map[string]any{"statement": "SELEC 1"}, 400); !strings.Contains(msg, "statement.sql:1:1") {
			t.Errorf("a syntax error: %q", msg)
		}
		ts.gwFail("POST", sp+"/statements", map[string]any{"statement": "SELECT 1; SELECT 2"}, 400)
		ts.gwFail("GET", "/v2/sessions/00000000-0000-4000-8000-000000000000", nil, 404)
		ts.gwFail("POST", "/v2/sessions/00000000-0000-4000-8000-000000000000/statements", map[string]any{"statement": "SELECT 1"}, 404)
		ts.gwFail("GET", sp+"/operations/00000000-0000-4000-8000-000000000000/status", nil, 404)
		ts.gwFail("POST", sp+"/statements", "not an object", 400)
		// Paths and methods the gateway does not take answer in Flink's
		// form too.
		ts.gwFail("POST", sp+"/scripts", map[string]any{}, 404)
		ts.gwFail("PUT", sp+"/statements", map[string]any{}, 405)
		// A query that fails while it runs: its rows, then its error.
		op := ts.execute("v2", sh, "SELECT CAST(CAST(id AS STRING) || 'x' AS INT) AS n FROM small")
		uri := op + "/result/0"
		for deadline := time.Now().Add(time.Minute); ; {
			code, b := ts.call("GET", uri, nil)
			if code == 500 {
				var e map[string]any
				json.Unmarshal(b, &e)
				conform(t, "failed query", e, flinkErrorBody)
				if !strings.Contains(string(b), "cannot cast") {
					t.Errorf("the query's error: %s", b)
				}
				break
			}
			var page map[string]any
			json.Unmarshal(b, &page)
			if code != 200 || page["resultType"] == "EOS" || time.Now().After(deadline) {
				t.Fatalf("a failing query: %d %s", code, b)
			}
			uri = page["nextResultUri"].(string)
		}
		if st := ts.gw("GET", op+"/status", nil, 200, flinkOpStatus)["status"]; st != "ERROR" {
			t.Errorf("status %v of a failed query", st)
		}
	})

	t.Run("complete", func(t *testing.T) {
		got := ts.gw("GET", sp+"/complete-statement", map[string]any{"statement": "SELECT * FROM se", "position": 16}, 200, flinkComplete)["candidates"]
		if !slices.Contains(got.([]any), any("seq")) || !slices.Contains(got.([]any), any("SELECT")) {
			t.Errorf("candidates %v", got)
		}
	})

	t.Run("v1 and isolation", func(t *testing.T) {
		other := ts.openSession("v1", nil)
		op := ts.execute("v1", other, "SELECT 1 AS one")
		page := ts.gw("GET", op+"/result/0", nil, 200, flinkFetch)
		if next := page["nextResultUri"].(string); strings.Contains(next, "rowFormat") || !strings.HasPrefix(next, "/v1/") {
			t.Errorf("a v1 next URI: %s", next)
		}
		if msg := ts.gwFail("POST", "/v1/sessions/"+other+"/statements", map[string]any{"statement": "SELECT * FROM seq"}, 400); !strings.Contains(msg, "seq") {
			t.Errorf("another session's table: %s", msg)
		}
		ts.gw("DELETE", "/v1/sessions/"+other, nil, 200, flinkCloseSession)
	})

	t.Run("close", func(t *testing.T) {
		op := ts.execute("v2", sh, "SELECT id FROM gen")
		ts.gw("GET", op+"/result/0", nil, 200, flinkFetch)
		ts.gw("DELETE", sp, nil, 200, flinkCloseSession)
		ts.waitNoQueries()
		ts.gwFail("GET", sp, nil, 404)
		ts.gwFail("GET", op+"/result/1", nil, 404)
		// The jobs it published run on.
		ts.must("GET", "/v1/jobs/gw-insert", nil, 200, nil)
	})
}

// A session idle for longer than the timeout is closed, and its queries
// stop.
func TestGatewayIdleTimeout(t *testing.T) {
	ts := startServerWith(t, Config{DataDir: t.TempDir(), GatewayIdleTimeout: 50 * time.Millisecond})
	sh := ts.openSession("v2", nil)
	ts.gw("POST", "/v2/sessions/"+sh+"/configure-session", map[string]any{"statement": `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10')`}, 200, flinkEmpty)
	ts.execute("v2", sh, "SELECT id FROM gen")
	for deadline := time.Now().Add(time.Minute); ts.s.gw.get(sh) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle session is still open after a minute")
		}
	}
	ts.gwFail("POST", "/v2/sessions/"+sh+"/heartbeat", nil, http.StatusNotFound)
	ts.waitNoQueries()
	if !strings.Contains(ts.log.String(), "gateway session closed: idle") {
		t.Error("no log of the closing")
	}
}

// The server closes while a query waits for its client (its buffer
// full): the query is cancelled, and Close returns.
func TestGatewayServerClose(t *testing.T) {
	ts := startServer(t, t.TempDir(), false, "")
	sh := ts.openSession("v2", nil)
	ts.gw("POST", "/v2/sessions/"+sh+"/configure-session", map[string]any{"statement": `CREATE TABLE fast (id BIGINT) WITH ('connector' = 'datagen')`}, 200, flinkEmpty)
	op := ts.execute("v2", sh, "SELECT id FROM fast")
	o := ts.s.gw.get(sh).op(op[strings.LastIndex(op, "/")+1:])
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		o.mu.Lock()
		n := len(o.rows)
		o.mu.Unlock()
		if n == gatewayBufferRows {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows buffered after a minute", n)
		}
	}
	engine := ts.s.engine
	ts.close()
	if n := len(engine.Jobs()); n != 0 {
		t.Errorf("%d jobs run after Close", n)
	}
}

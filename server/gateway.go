package server

// The SQL-session part of Apache Flink's SQL Gateway REST API (see
// docs/server.md, "Flink SQL gateway API"), for clients written for
// Flink's gateway: Flink's SQL client in gateway mode, scripts. Its
// bodies have exactly the fields Flink's have (Flink's client refuses a
// field it does not know), and its errors are Flink's {"errors": [...]}.
//
// A gateway session is a session of the server's engine: its tables,
// views and SETs are its own, over the server's catalog, until it is
// closed or idle for Config.GatewayIdleTimeout. A statement runs when it
// is submitted and its operation is FINISHED at once (as a Flink
// operation is once its job is submitted): DDL and SET answer "OK"; a
// SELECT runs as a query job of its own whose rows wait for the client
// (gateway_result.go); an INSERT or a statement set is published as a
// server job, with the session's DDL and SETs before it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/sql/ast"
	"github.com/sluicesql/sluice/sql/parser"
	"github.com/sluicesql/sluice/sql/token"
)

const (
	// defaultGatewayIdleTimeout is Flink's 'sql-gateway.session.idle-timeout'.
	defaultGatewayIdleTimeout = 10 * time.Minute
	// gatewayJobLabel is the label that holds, on a job published by an
	// INSERT of a gateway session, the Flink job ID it answered.
	gatewayJobLabel = "flink.job-id"
	// gatewayFile names a submitted statement in its errors' positions.
	gatewayFile = "statement.sql"
)

// gatewayVersions are the versions of Flink's API whose paths are
// answered; their shapes are the same here.
var gatewayVersions = []string{"v1", "v2", "v3", "v4"}

// gatewayListed are the versions GET /{version}/api_versions lists. Flink's
// client takes the newest it knows, and fails on a name it does not know:
// V3 and V4 would break the clients of Flink 1.17 to 1.19, and every
// client since 1.17 speaks V2.
var gatewayListed = []string{"V1", "V2"}

// gateway holds the gateway sessions.
type gateway struct {
	idle time.Duration
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*gwSession
	closed   bool

	stop chan struct{}
	done chan struct{}
}

func newGateway(idle time.Duration, log *slog.Logger) *gateway {
	return &gateway{idle: idle, log: log, sessions: map[string]*gwSession{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// start closes, from now on, the sessions idle for longer than g.idle.
func (g *gateway) start() {
	every := min(max(g.idle/10, 10*time.Millisecond), time.Minute)
	go func() {
		defer close(g.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-g.stop:
				return
			case now := <-t.C:
				for _, gs := range g.expired(now) {
					g.log.Info("gateway session closed: idle", "session", gs.id, "idle_timeout", g.idle)
					gs.close()
				}
			}
		}
	}()
}

// expired removes and returns the sessions idle since before now - g.idle.
func (g *gateway) expired(now time.Time) []*gwSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*gwSession
	for id, gs := range g.sessions {
		if now.Sub(gs.lastUsed()) > g.idle {
			delete(g.sessions, id)
			out = append(out, gs)
		}
	}
	return out
}

// close closes every session, stopping their queries.
func (g *gateway) close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	all := slices.Collect(maps.Values(g.sessions))
	g.sessions = map[string]*gwSession{}
	g.mu.Unlock()
	close(g.stop)
	<-g.done
	for _, gs := range all {
		gs.close()
	}
}

func (g *gateway) add(gs *gwSession) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.sessions[gs.id] = gs
	return true
}

func (g *gateway) get(id string) *gwSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sessions[id]
}

func (g *gateway) remove(id string) *gwSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	gs := g.sessions[id]
	delete(g.sessions, id)
	return gs
}

// gwSession is a gateway session.
type gwSession struct {
	id, name string
	eng      *sluice.Engine

	// run serializes the session's statements, and its closing.
	run sync.Mutex

	// mu guards the fields below.
	mu sync.Mutex
	// props are the properties given at opening that Sluice does not
	// read (Flink's client sends its whole configuration): shown with
	// the session's configuration, never applied.
	props map[string]string
	// ddl are the DDL statements the session ran, in order: they come
	// before the INSERT of a job it publishes.
	ddl    []string
	ops    map[string]*gwOp
	last   time.Time
	closed bool
}

func (gs *gwSession) touch() {
	gs.mu.Lock()
	gs.last = time.Now()
	gs.mu.Unlock()
}

func (gs *gwSession) lastUsed() time.Time {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.last
}

// close stops the session's operations and closes its engine session,
// once a statement that runs has ended. The jobs it published run on.
func (gs *gwSession) close() {
	gs.run.Lock()
	defer gs.run.Unlock()
	gs.mu.Lock()
	if gs.closed {
		gs.mu.Unlock()
		return
	}
	gs.closed = true
	ops := slices.Collect(maps.Values(gs.ops))
	gs.ops = nil
	gs.mu.Unlock()
	for _, op := range ops {
		op.stop(opClosed)
	}
	gs.eng.Close()
}

// config returns the session's configuration, secrets masked.
func (gs *gwSession) config() map[string]string {
	gs.mu.Lock()
	out := maps.Clone(gs.props)
	gs.mu.Unlock()
	maps.Copy(out, gs.eng.Config())
	for k, v := range out {
		out[k] = redact.Option(k, v)
	}
	return out
}

// script returns the session's DDL, for the secrets it declares.
func (gs *gwSession) script() string {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return strings.Join(gs.ddl, ";\n")
}

func (gs *gwSession) op(id string) *gwOp {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.ops[id]
}

// gwRoute answers a route of the gateway: a version in the path it does
// not know is a 404, as an unknown path is.
func (s *Server) gwRoute(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(gatewayVersions, r.PathValue("version")) {
			gwError(w, http.StatusNotFound, fmt.Sprintf("Not found: %s (the Flink SQL gateway API's versions are %s)", r.URL.Path, strings.Join(gatewayVersions, ", ")))
			return
		}
		h(w, r)
	}
}

// gatewayRoutes are the routes of the gateway, under /{version}/.
func (s *Server) gatewayRoutes() []route {
	const sess = "/{version}/sessions/{session_handle}"
	const op = sess + "/operations/{operation_handle}"
	rs := []route{
		{"GET", "/{version}/api_versions", s.gwAPIVersions},
		{"GET", "/{version}/info", s.gwInfo},
		{"POST", "/{version}/sessions", s.gwOpenSession},
		{"GET", sess, s.gwSessionConfig},
		{"DELETE", sess, s.gwCloseSession},
		{"POST", sess + "/heartbeat", s.gwHeartbeat},
		{"POST", sess + "/configure-session", s.gwConfigureSession},
		{"GET", sess + "/complete-statement", s.gwCompleteStatement},
		{"POST", sess + "/statements", s.gwExecuteStatement},
		{"GET", op + "/status", s.gwOperationStatus},
		{"POST", op + "/cancel", s.gwCancelOperation},
		{"DELETE", op + "/close", s.gwCloseOperation},
		{"GET", op + "/result/{token}", s.gwFetchResults},
	}
	for i := range rs {
		rs[i].handle = s.gwRoute(rs[i].handle)
	}
	return rs
}

// isGatewayPath reports whether path is one of the gateway's, whose
// errors are Flink's.
func isGatewayPath(path string) bool {
	v, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	first, _, _ := strings.Cut(rest, "/")
	return slices.Contains(gatewayVersions, v) && (first == "sessions" || first == "info" || first == "api_versions")
}

// gwError answers an error as Flink's REST API does.
func gwError(w http.ResponseWriter, status int, msgs ...string) {
	writeJSON(w, status, map[string][]string{"errors": msgs})
}

// gwFail is an error answer of the gateway.
type gwFail struct {
	status int
	msg    string
}

func (f *gwFail) write(w http.ResponseWriter) { gwError(w, f.status, f.msg) }

// badRequest is a 400 of the gateway.
func badRequest(format string, args ...any) *gwFail {
	return &gwFail{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// sqlFail turns an error of the engine about src into an answer: 400
// with the message, its position and the line of src when it has one,
// else 500. Secrets of the session's tables are masked.
func (s *Server) sqlFail(gs *gwSession, src string, err error) *gwFail {
	msg := s.mask(gs.script()+";\n"+src, sluice.FormatError(err, []byte(src)))
	var list token.ErrorList
	var one *token.Error
	if errors.As(err, &list) || errors.As(err, &one) {
		return &gwFail{http.StatusBadRequest, msg}
	}
	s.log.Error("gateway statement failed", "error", msg)
	return &gwFail{http.StatusInternalServerError, msg}
}

// gwDecode reads a JSON body, which may be empty, into v; it answers 400
// itself on failure.
func gwDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return true
	}
	gwError(w, http.StatusBadRequest, "Cannot read the request's JSON body: "+err.Error())
	return false
}

// session returns the session of the request's path, marked used, or
// answers 404.
func (s *Server) session(w http.ResponseWriter, r *http.Request) *gwSession {
	id := r.PathValue("session_handle")
	gs := s.gw.get(id)
	if gs == nil {
		gwError(w, http.StatusNotFound, fmt.Sprintf("Session '%s' does not exist (it was closed, or idle for longer than %s).", id, s.gw.idle))
		return nil
	}
	gs.touch()
	return gs
}

// operation returns the session and the operation of the request's path,
// or answers 404.
func (s *Server) operation(w http.ResponseWriter, r *http.Request) (*gwSession, *gwOp) {
	gs := s.session(w, r)
	if gs == nil {
		return nil, nil
	}
	id := r.PathValue("operation_handle")
	op := gs.op(id)
	if op == nil {
		gwError(w, http.StatusNotFound, fmt.Sprintf("Operation '%s' does not exist in session '%s' (it was closed, or never existed).", id, gs.id))
		return nil, nil
	}
	return gs, op
}

func (s *Server) gwAPIVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string][]string{"versions": gatewayListed})
}

func (s *Server) gwInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"productName": "Sluice", "version": sluice.Version})
}

type gwOpenRequest struct {
	SessionName string            `json:"sessionName"`
	Properties  map[string]string `json:"properties"`
}

// gwOpenSession answers POST /{version}/sessions: a new session, with
// the properties Sluice reads SET in it and the others kept aside.
func (s *Server) gwOpenSession(w http.ResponseWriter, r *http.Request) {
	var req gwOpenRequest
	if !gwDecode(w, r, &req) {
		return
	}
	gs := &gwSession{id: newUUID(), name: req.SessionName, eng: s.engine.NewSession(),
		props: map[string]string{}, ops: map[string]*gwOp{}, last: time.Now()}
	var sets strings.Builder
	for _, k := range slices.Sorted(maps.Keys(req.Properties)) {
		if config.Known(k) {
			fmt.Fprintf(&sets, "SET %s = %s;\n", sqlString(k), sqlString(req.Properties[k]))
		} else {
			gs.props[k] = req.Properties[k]
		}
	}
	if sets.Len() > 0 {
		if _, err := gs.eng.Exec(context.Background(), "properties", []byte(sets.String())); err != nil {
			gs.eng.Close()
			gwError(w, http.StatusBadRequest, "Cannot open the session: a property is refused: "+s.mask("", sluice.FormatError(err, []byte(sets.String()))))
			return
		}
	}
	if s.isClosing() || !s.gw.add(gs) {
		gs.eng.Close()
		gwError(w, http.StatusServiceUnavailable, "The server is shutting down.")
		return
	}
	s.log.Info("gateway session opened", "session", gs.id, "name", gs.name)
	writeJSON(w, http.StatusOK, map[string]string{"sessionHandle": gs.id})
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) gwSessionConfig(w http.ResponseWriter, r *http.Request) {
	if gs := s.session(w, r); gs != nil {
		writeJSON(w, http.StatusOK, map[string]map[string]string{"properties": gs.config()})
	}
}

// gwCloseSession answers DELETE /{version}/sessions/{session_handle}:
// its queries stop; the jobs it published run on.
func (s *Server) gwCloseSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session_handle")
	gs := s.gw.remove(id)
	if gs == nil {
		gwError(w, http.StatusNotFound, fmt.Sprintf("Session '%s' does not exist.", id))
		return
	}
	gs.close()
	s.log.Info("gateway session closed", "session", id)
	writeJSON(w, http.StatusOK, map[string]string{"status": "CLOSED"})
}

func (s *Server) gwHeartbeat(w http.ResponseWriter, r *http.Request) {
	if gs := s.session(w, r); gs != nil {
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

type gwStatementRequest struct {
	Statement string `json:"statement"`
	// ExecutionTimeout is Flink's; it is not used.
	ExecutionTimeout int64 `json:"executionTimeout"`
	// ExecutionConfig are options for this statement only.
	ExecutionConfig map[string]string `json:"executionConfig"`
}

// gwConfigureSession answers POST .../configure-session: DDL, SET or
// RESET, run in the session, answering nothing.
func (s *Server) gwConfigureSession(w http.ResponseWriter, r *http.Request) {
	var req gwStatementRequest
	if !gwDecode(w, r, &req) {
		return
	}
	gs := s.session(w, r)
	if gs == nil {
		return
	}
	if _, fail := s.runStatement(gs, requester(r), req.Statement, nil, true); fail != nil {
		fail.write(w)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// gwExecuteStatement answers POST .../statements: the statement runs,
// and its operation's handle is the answer.
func (s *Server) gwExecuteStatement(w http.ResponseWriter, r *http.Request) {
	var req gwStatementRequest
	if !gwDecode(w, r, &req) {
		return
	}
	gs := s.session(w, r)
	if gs == nil {
		return
	}
	op, fail := s.runStatement(gs, requester(r), req.Statement, req.ExecutionConfig, false)
	if fail != nil {
		fail.write(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"operationHandle": op.id})
}

// runStatement runs one statement in the session, as who's, and returns
// its operation, FINISHED; configure allows only DDL, SET and RESET,
// whose operation is not kept.
func (s *Server) runStatement(gs *gwSession, who, src string, extra map[string]string, configure bool) (*gwOp, *gwFail) {
	if s.isClosing() {
		return nil, &gwFail{http.StatusServiceUnavailable, "The server is shutting down."}
	}
	stmts, err := parser.ParseFile(gatewayFile, []byte(src))
	if err != nil {
		return nil, s.sqlFail(gs, src, err)
	}
	if len(stmts) != 1 {
		return nil, badRequest("A request runs one statement; this one holds %d.", len(stmts))
	}
	st := stmts[0]
	switch st.(type) {
	case *ast.CreateTable, *ast.CreateView, *ast.CreateRuleset, *ast.AlterRuleset, *ast.CreateMetricGroup, *ast.AlterMetricGroup, *ast.CreateFunction, *ast.Drop, *ast.Set, *ast.Reset:
	default:
		if configure {
			return nil, badRequest("configure-session takes DDL, SET and RESET statements; run the others with POST .../statements.")
		}
	}
	gs.run.Lock()
	defer gs.run.Unlock()
	// Closing waits for gs.run: a session open now stays open until the
	// statement's end.
	gs.mu.Lock()
	closed := gs.closed
	gs.mu.Unlock()
	if closed {
		return nil, &gwFail{http.StatusNotFound, fmt.Sprintf("Session '%s' was closed.", gs.id)}
	}
	var op *gwOp
	var fail *gwFail
	switch st.(type) {
	case *ast.CreateTable, *ast.CreateView, *ast.CreateRuleset, *ast.AlterRuleset, *ast.CreateMetricGroup, *ast.AlterMetricGroup, *ast.CreateFunction, *ast.Drop, *ast.Set, *ast.Reset:
		op, fail = s.runDDL(gs, who, st, src)
	case *ast.QueryStmt:
		op, fail = s.runQuery(gs, src, extra)
	case *ast.Insert, *ast.StatementSet:
		op, fail = s.runInsert(gs, st, src, extra)
	case *ast.Show, *ast.Describe, *ast.Explain:
		op, fail = s.runShow(gs, st, src)
	default:
		return nil, badRequest("Statement %T is not supported.", st)
	}
	if fail != nil || configure {
		return nil, fail
	}
	gs.mu.Lock()
	gs.ops[op.id] = op
	gs.mu.Unlock()
	return op, nil
}

// runDDL runs DDL, SET or RESET in the session, as who's. A SET
// without a key lists the session's configuration, as Flink's does. An
// ALTER RULESET or METRIC GROUP of one of the server's catalog (not one
// the session declares) changes the catalog, as POST /v1/catalog does;
// the other DDL changes the session's own objects. Both are audited.
func (s *Server) runDDL(gs *gwSession, who string, st ast.Statement, src string) (*gwOp, *gwFail) {
	if set, ok := st.(*ast.Set); ok && set.Key == "" {
		cfg := gs.config()
		var rows [][]string
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			rows = append(rows, []string{k, cfg[k]})
		}
		return fixedOp(resultWithContent, []string{"key", "value"}, rows, ""), nil
	}
	kind, object, action := auditObject(st)
	if action == "alter" && !gs.eng.Declares(object) {
		if objectVersion(s.engine, kind, object) > 0 {
			if err := s.changeCatalog(who, gatewayFile, []byte(src), []ast.Statement{st}); err != nil {
				var se *storeError
				if errors.As(err, &se) {
					s.log.Error("gateway statement failed", "session", gs.id, "error", se.err)
					return nil, &gwFail{http.StatusInternalServerError, se.err.Error()}
				}
				return nil, s.sqlFail(gs, src, err)
			}
			return fixedOp(resultSuccess, []string{"result"}, [][]string{{"OK"}}, ""), nil
		}
	}
	before := objectVersion(gs.eng, kind, object)
	if _, err := gs.eng.Exec(context.Background(), gatewayFile, []byte(src)); err != nil {
		return nil, s.sqlFail(gs, src, err)
	}
	switch st.(type) {
	case *ast.CreateTable, *ast.CreateView, *ast.CreateRuleset, *ast.AlterRuleset, *ast.CreateMetricGroup, *ast.AlterMetricGroup, *ast.CreateFunction, *ast.Drop:
		text := statementText(src, st)
		gs.mu.Lock()
		gs.ddl = append(gs.ddl, text)
		gs.mu.Unlock()
		e := auditEntry{Time: time.Now().UTC(), Who: who, Scope: "session " + gs.id, Kind: kind, Object: object, Action: action,
			Statement: s.mask(src, text), VersionBefore: before, VersionAfter: objectVersion(gs.eng, kind, object)}
		if err := s.audit.append([]auditEntry{e}); err != nil {
			s.log.Error("cannot record a gateway session's change in the audit log", "session", gs.id, "error", err)
			return nil, &gwFail{http.StatusInternalServerError, err.Error()}
		}
	}
	return fixedOp(resultSuccess, []string{"result"}, [][]string{{"OK"}}, ""), nil
}

// runShow runs SHOW, DESCRIBE or EXPLAIN: SHOW answers a column named
// as Flink's, the others their text in a column "result".
func (s *Server) runShow(gs *gwSession, st ast.Statement, src string) (*gwOp, *gwFail) {
	res, err := gs.eng.Exec(context.Background(), gatewayFile, []byte(src))
	if err != nil {
		return nil, s.sqlFail(gs, src, err)
	}
	msg := strings.TrimRight(res[0].Message, "\n")
	if _, ok := st.(*ast.Show); ok {
		lines := strings.Split(msg, "\n")
		var rows [][]string
		for _, l := range lines[1:] {
			rows = append(rows, []string{l})
		}
		return fixedOp(resultWithContent, []string{lines[0]}, rows, ""), nil
	}
	return fixedOp(resultWithContent, []string{"result"}, [][]string{{msg}}, ""), nil
}

// runInsert publishes an INSERT or a statement set as a server job,
// named by 'pipeline.name' when the session sets it: its script is the
// session's options that Sluice reads, its DDL, and the statement.
func (s *Server) runInsert(gs *gwSession, st ast.Statement, src string, extra map[string]string) (*gwOp, *gwFail) {
	// Planned in the session first, so that an error points into the
	// statement rather than into the job's script.
	if _, err := gs.eng.Explain(gatewayFile, []byte(src)); err != nil {
		return nil, s.sqlFail(gs, src, err)
	}
	cfg := gs.eng.Config()
	maps.Copy(cfg, extra)
	id := newJobID()
	name := cfg[config.PipelineName]
	delete(cfg, config.PipelineName)
	if name == "" {
		name = gatewayJobName(st, id)
	} else if !validName(name) {
		return nil, badRequest("'%s' = '%s' names the job this statement publishes: use 1 to 100 letters, digits, '_', '.' or '-'.", config.PipelineName, name)
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if config.Known(k) {
			fmt.Fprintf(&b, "SET %s = %s;\n", sqlString(k), sqlString(cfg[k]))
		}
	}
	gs.mu.Lock()
	for _, d := range gs.ddl {
		b.WriteString(d + ";\n")
	}
	gs.mu.Unlock()
	b.WriteString(statementText(src, st) + ";\n")
	script := b.String()
	if _, err := s.publish(name, script, map[string]string{gatewayJobLabel: id}); err != nil {
		var pe *publishError
		if errors.As(err, &pe) {
			return nil, &gwFail{pe.status, pe.msg}
		}
		return nil, s.sqlFail(gs, script, err)
	}
	s.log.Info("gateway statement published a job", "session", gs.id, "job", name, "flink_job_id", id)
	return fixedOp(resultWithContent, []string{"job id"}, [][]string{{id}}, id), nil
}

// gatewayJobName names a job published without 'pipeline.name': as the
// engine names it, and the start of its ID.
func gatewayJobName(st ast.Statement, id string) string {
	base := "statement-set"
	if ins, ok := st.(*ast.Insert); ok {
		base = "insert-into-" + strings.Map(func(r rune) rune {
			if r < 128 && (r == '_' || r == '.' || r == '-' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
				return r
			}
			return '_'
		}, ins.Table.Last().Name)
	}
	return base[:min(len(base), 90)] + "-" + id[:8]
}

// statementText is the text of st in src, without the ';' after it.
func statementText(src string, st ast.Statement) string {
	return src[st.Pos().Offset():st.End().Offset()]
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newJobID returns an ID as Flink's: 32 hexadecimal digits.
func newJobID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Server) gwOperationStatus(w http.ResponseWriter, r *http.Request) {
	if _, op := s.operation(w, r); op != nil {
		writeJSON(w, http.StatusOK, map[string]string{"status": op.currentStatus()})
	}
}

// gwCancelOperation answers POST .../cancel: a query's job is cancelled;
// the operation stays, CANCELED, until closed.
func (s *Server) gwCancelOperation(w http.ResponseWriter, r *http.Request) {
	if _, op := s.operation(w, r); op != nil {
		op.stop(opCanceled)
		writeJSON(w, http.StatusOK, map[string]string{"status": op.currentStatus()})
	}
}

// gwCloseOperation answers DELETE .../close: a query's job is cancelled
// and the operation is gone.
func (s *Server) gwCloseOperation(w http.ResponseWriter, r *http.Request) {
	gs, op := s.operation(w, r)
	if op == nil {
		return
	}
	gs.mu.Lock()
	delete(gs.ops, op.id)
	gs.mu.Unlock()
	op.stop(opClosed)
	writeJSON(w, http.StatusOK, map[string]string{"status": opClosed})
}

// gwFetchResults answers GET .../result/{token}?rowFormat=JSON|PLAIN_TEXT:
// the next page of the operation's rows (see gwOp.fetch).
func (s *Server) gwFetchResults(w http.ResponseWriter, r *http.Request) {
	format := strings.ToUpper(r.URL.Query().Get("rowFormat"))
	switch format {
	case "":
		format = rowFormatJSON
	case rowFormatJSON, rowFormatPlain:
	default:
		gwError(w, http.StatusBadRequest, fmt.Sprintf("rowFormat %q: use JSON or PLAIN_TEXT.", r.URL.Query().Get("rowFormat")))
		return
	}
	tok, err := strconv.ParseInt(r.PathValue("token"), 10, 64)
	if err != nil || tok < 0 {
		gwError(w, http.StatusBadRequest, fmt.Sprintf("token %q: a number from 0 up.", r.PathValue("token")))
		return
	}
	gs, op := s.operation(w, r)
	if op == nil {
		return
	}
	page, fail := op.fetch(r.Context(), tok)
	if fail != nil {
		if fail.status == http.StatusInternalServerError {
			fail.msg = s.mask(gs.script(), fail.msg)
		}
		fail.write(w)
		return
	}
	next := ""
	if !page.eos {
		next = fmt.Sprintf("/%s/sessions/%s/operations/%s/result/%d", r.PathValue("version"), gs.id, op.id, page.next)
		if r.PathValue("version") != "v1" {
			next += "?rowFormat=" + format
		}
	}
	body, err := op.body(page, format, next)
	if err != nil {
		gwError(w, http.StatusInternalServerError, "Cannot encode the results: "+err.Error())
		return
	}
	// Compact: a page holds up to gatewayBufferRows rows, which
	// indentation would double.
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// gwCompleteStatement answers GET .../complete-statement: the keywords,
// tables and views that complete the word before position.
func (s *Server) gwCompleteStatement(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Statement string `json:"statement"`
		Position  int    `json:"position"`
	}
	if !gwDecode(w, r, &req) {
		return
	}
	gs := s.session(w, r)
	if gs == nil {
		return
	}
	end := min(max(req.Position, 0), len(req.Statement))
	start := end
	for start > 0 && isWordByte(req.Statement[start-1]) {
		start--
	}
	prefix := strings.ToUpper(req.Statement[start:end])
	out := []string{}
	if prefix != "" {
		for _, words := range [][]string{token.Keywords(), gs.eng.Tables(), gs.eng.Views()} {
			for _, word := range words {
				if strings.HasPrefix(strings.ToUpper(word), prefix) && !slices.Contains(out, word) {
					out = append(out, word)
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string][]string{"candidates": out})
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

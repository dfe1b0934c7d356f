package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicesql/sluice/sql/ast"
)

// auditFile is the audit log of the data directory: one entry (JSON) a
// line, appended and synced as each change is applied.
const auditFile = "audit.jsonl"

// auditEntry records one change of the catalog: when, by whom, the
// statement, and what it changed.
type auditEntry struct {
	Time time.Time `json:"time"`
	// Who is the name of the API token of the request, or "anonymous"
	// with auth off.
	Who string `json:"who"`
	// Scope is "catalog" (the server's, which every job sees) or
	// "session <id>" (a session of the SQL gateway, its own objects).
	Scope string `json:"scope"`
	// Kind is the kind of object: "table", "view", "ruleset", "metric
	// group" or "function"; Action "create", "alter" or "drop".
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Action string `json:"action"`
	// Statement is the statement as written, its secrets masked.
	Statement string `json:"statement"`
	// VersionBefore and VersionAfter are the object's versions before
	// and after the change, for objects that have versions (rulesets,
	// metric groups);
	// 0 when there is none (before a creation, after a drop).
	VersionBefore int `json:"version_before,omitempty"`
	VersionAfter  int `json:"version_after,omitempty"`
}

// auditLog is the audit log of a data directory. Appends are serialized;
// a line cut short by a crash while it was appended is skipped when read.
type auditLog struct {
	path string
	mu   sync.Mutex
}

// append adds entries to the log, durably.
func (a *auditLog) append(entries []auditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var b bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.OpenFile(a.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cannot open the audit log: %w", err)
	}
	if err := cutTornLine(f); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("cannot append to the audit log: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cannot sync the audit log: %w", err)
	}
	return f.Close()
}

// cutTornLine ends the log at its last complete line: a line a crash
// cut short must not run into the next entry.
func cutTornLine(f *os.File) error {
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, info.Size()-1); err != nil {
		return fmt.Errorf("cannot read the audit log: %w", err)
	}
	if last[0] == '\n' {
		return nil
	}
	data := make([]byte, info.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return fmt.Errorf("cannot read the audit log: %w", err)
	}
	return f.Truncate(int64(bytes.LastIndexByte(data, '\n') + 1))
}

// entries returns the entries of object ("": every object), newest
// first, at most limit of them.
func (a *auditLog) entries(object string, limit int) ([]auditEntry, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return []auditEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var all []auditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxBody+1<<20)
	for sc.Scan() {
		var e auditEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a torn last line
		}
		if object == "" || e.Object == object {
			all = append(all, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read the audit log: %w", err)
	}
	slices.Reverse(all)
	return all[:min(limit, len(all))], nil
}

// auditObject says what a catalog statement changes: the kind of
// object, its name and the action.
func auditObject(st ast.Statement) (kind, object, action string) {
	switch st := st.(type) {
	case *ast.CreateTable:
		return "table", st.Name.Last().Name, "create"
	case *ast.CreateView:
		return "view", st.Name.Last().Name, "create"
	case *ast.CreateRuleset:
		return "ruleset", st.Name.Last().Name, "create"
	case *ast.AlterRuleset:
		return "ruleset", st.Name.Last().Name, "alter"
	case *ast.CreateMetricGroup:
		return "metric group", st.Name.Last().Name, "create"
	case *ast.AlterMetricGroup:
		return "metric group", st.Name.Last().Name, "alter"
	case *ast.CreateFunction:
		return "function", st.Name.Last().Name, "create"
	case *ast.Drop:
		return strings.ToLower(st.What), st.Name.Last().Name, "drop"
	}
	return "", "", ""
}

// Audit query bounds.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 10000
)

// getAudit answers GET /v1/audit: the changes of the catalog, newest
// first, of one object (?object=) or all, at most ?limit= of them.
func (s *Server) getAudit(w http.ResponseWriter, r *http.Request) {
	limit := defaultAuditLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditLimit {
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("limit %q: give a number from 1 to %d", v, maxAuditLimit), nil)
			return
		}
		limit = n
	}
	es, err := s.audit.entries(r.URL.Query().Get("object"), limit)
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": es})
}

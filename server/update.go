package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sluicesql/sluice/state"
)

// updateRequest is the body of PUT /v1/jobs/{name} (SQL) and of POST
// /v1/jobs/{name}/rollback (Version).
type updateRequest struct {
	SQL            string `json:"sql"`
	Version        int    `json:"version"`
	DryRun         bool   `json:"dry_run"`
	AllowStateLoss bool   `json:"allow_state_loss"`
}

// updateJSON is the answer to an update or a rollback: the version made
// (or that a dry run would make), whether it is now the job's, and what
// happens to each part of the job's state.
type updateJSON struct {
	Version int               `json:"version"`
	Applied bool              `json:"applied"`
	Verdict string            `json:"verdict"`
	Changes []stateChangeJSON `json:"changes"`
	Job     *jobJSON          `json:"job,omitempty"`
}

// stateChangeJSON is what an update does to the state of one source,
// stateful operator or sink.
type stateChangeJSON struct {
	Operator string `json:"operator"`
	Change   string `json:"change"`
	Reason   string `json:"reason,omitempty"`
}

// updateJob answers PUT /v1/jobs/{name}: a new version of the job's SQL.
func (s *Server) updateJob(w http.ResponseWriter, r *http.Request) {
	var req updateRequest
	if !decode(w, r, &req, false) {
		return
	}
	if strings.TrimSpace(req.SQL) == "" {
		writeError(w, http.StatusBadRequest, codeBadRequest, "the update has no SQL: send {\"sql\": \"...\"}", nil)
		return
	}
	s.update(w, r.PathValue("name"), req)
}

// rollbackJob answers POST /v1/jobs/{name}/rollback: a kept version's
// SQL becomes a new version, as an update to it.
func (s *Server) rollbackJob(w http.ResponseWriter, r *http.Request) {
	var req updateRequest
	if !decode(w, r, &req, false) {
		return
	}
	name := r.PathValue("name")
	s.mu.Lock()
	_, ok := s.jobs[name]
	s.mu.Unlock()
	if !ok {
		s.lookup(w, name) // answers the 404
		return
	}
	sql, err := s.store.sql(name, req.Version)
	if errors.Is(err, os.ErrNotExist) {
		kept, _ := s.store.versionNumbers(name)
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("job %s has no version %d: the versions kept are %v", name, req.Version, kept), nil)
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	req.SQL = sql
	s.update(w, name, req)
}

// update checks the new SQL, compares its job's state with the state the
// job keeps, and (unless a dry run, or the update would drop state
// without allow_state_loss) records it as a new version and switches the
// job to it: the running version stops with a final checkpoint and the
// new one starts from that state. If the new one fails to start, the old
// one runs again and the update reports why.
func (s *Server) update(w http.ResponseWriter, name string, req updateRequest) {
	filename := name + ".sql"
	if err := checkScript(filename, []byte(req.SQL)); err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	s.ops.Lock()
	defer s.ops.Unlock()
	j := s.lookup(w, name)
	if j == nil {
		return
	}
	report, err := s.compare(name, j.sql, req.SQL)
	if err != nil {
		s.writeSQLError(w, req.SQL, err)
		return
	}
	nums, err := s.store.versionNumbers(name)
	if err != nil {
		s.internal(w, err)
		return
	}
	s.mu.Lock()
	next := j.rec.Version + 1
	s.mu.Unlock()
	if len(nums) > 0 {
		next = max(next, nums[len(nums)-1]+1)
	}
	out := updateJSON{Version: next, Verdict: string(report.Verdict), Changes: []stateChangeJSON{}}
	for _, c := range report.Changes {
		out.Changes = append(out.Changes, stateChangeJSON{Operator: c.Label, Change: string(c.Change), Reason: s.mask(req.SQL, c.Reason)})
	}
	if req.DryRun {
		writeJSON(w, http.StatusOK, out)
		return
	}
	dropped := report.Dropped()
	if len(dropped) > 0 && !req.AllowStateLoss {
		var what []string
		for _, c := range dropped {
			what = append(what, c.Label)
		}
		e := apiError{Code: codeConflict, Update: &out,
			Message: s.mask(req.SQL, fmt.Sprintf("the update would drop the state of %s (see changes); it is refused: send allow_state_loss to apply it anyway (sluice job update --allow-state-loss)", strings.Join(what, ", ")))}
		writeJSON(w, http.StatusConflict, errorBody{e})
		return
	}
	if err := s.store.saveVersion(name, next, req.SQL); err != nil {
		s.internal(w, err)
		return
	}
	s.mu.Lock()
	wasRunning := j.run != nil
	oldSQL, oldVersion := j.sql, j.rec.Version
	s.mu.Unlock()
	if err := s.stop(j, false); err != nil {
		s.internal(w, err)
		return
	}
	s.mu.Lock()
	j.sql, j.shownSQL = req.SQL, s.maskLocked(req.SQL, req.SQL)
	j.rec.Version = next
	j.rec.UpdatedAt = time.Now().UTC()
	j.rec.AllowLossOnce = len(dropped) > 0
	j.plan = ""
	s.mu.Unlock()
	if wasRunning {
		if err := s.start(j); err != nil {
			// The old version runs again; the new one is forgotten.
			s.mu.Lock()
			j.sql, j.shownSQL = oldSQL, s.maskLocked(oldSQL, oldSQL)
			j.rec.Version = oldVersion
			j.rec.AllowLossOnce = false
			s.mu.Unlock()
			if rerr := os.Remove(s.store.versionFile(name, next)); rerr != nil {
				s.log.Error("cannot remove a version that failed to start", "job", name, "version", next, "error", rerr)
			}
			if rerr := s.start(j); rerr != nil {
				s.ended(j, rerr)
				s.log.Error("the job's earlier version failed to start again after a failed update", "job", name, "error", rerr)
			}
			s.writeSQLError(w, req.SQL, fmt.Errorf("version %d failed to start, version %d runs again: %w", next, oldVersion, err))
			return
		}
	} else if err := s.save(j); err != nil {
		s.internal(w, err)
		return
	}
	s.log.Info("job updated", "job", name, "version", next, "verdict", report.Verdict, "running", wasRunning)
	out.Applied = true
	s.mu.Lock()
	view := s.view(j, false)
	s.mu.Unlock()
	view.withMetrics(time.Now())
	out.Job = &view
	writeJSON(w, http.StatusOK, out)
}

// compare plans newSQL as the job name would run it and compares its
// state with the state the job saved (or, before its first checkpoint,
// with the state oldSQL's job would keep).
func (s *Server) compare(name, oldSQL, newSQL string) (state.Report, error) {
	plan := func(sql string) (*state.Manifest, map[string]string, error) {
		sess := s.engine.NewSession()
		defer sess.Close()
		if _, err := sess.Exec(context.Background(), "server", []byte(s.prelude(name))); err != nil {
			return nil, nil, err
		}
		p, err := sess.Plan(name+".sql", []byte(sql))
		if err != nil {
			return nil, nil, err
		}
		return &p.Manifest, p.Config, nil
	}
	m, cfg, err := plan(newSQL)
	if err != nil {
		return state.Report{}, err
	}
	old, ok, err := s.engine.SavedManifest(context.Background(), name, cfg)
	if err != nil {
		return state.Report{}, fmt.Errorf("cannot read the state job %s saved: %w", name, err)
	}
	if !ok {
		om, _, err := plan(oldSQL)
		if err != nil {
			return state.Report{}, fmt.Errorf("cannot plan the running version of job %s: %w", name, err)
		}
		old = *om
	}
	r := state.Compare(old, *m)
	// What is dropped first, then what is new, then what is kept.
	rank := map[state.Change]int{state.Dropped: 0, state.New: 1, state.Kept: 2}
	slices.SortStableFunc(r.Changes, func(a, b state.StateChange) int { return rank[a.Change] - rank[b.Change] })
	return r, nil
}

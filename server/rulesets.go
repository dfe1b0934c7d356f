package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/suggest"
)

// The rulesets of the catalog as JSON (sluice.Ruleset): read here,
// changed through POST /v1/catalog (CREATE, ALTER and DROP RULESET).

// listRulesets answers GET /v1/rulesets: every ruleset at its current
// version, by name.
func (s *Server) listRulesets(w http.ResponseWriter, r *http.Request) {
	rs := s.engine.Rulesets()
	if rs == nil {
		rs = []sluice.Ruleset{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"rulesets": rs})
}

// showRuleset answers GET /v1/rulesets/{name}: the ruleset at its
// current version, with its shadow.
func (s *Server) showRuleset(w http.ResponseWriter, r *http.Request) {
	rs, ok := s.engine.RulesetInfo(r.PathValue("name"))
	if !ok {
		s.noRuleset(w, r.PathValue("name"))
		return
	}
	writeJSON(w, http.StatusOK, rs)
}

// listRulesetVersions answers GET /v1/rulesets/{name}/versions: the
// versions the ruleset keeps, oldest first.
func (s *Server) listRulesetVersions(w http.ResponseWriter, r *http.Request) {
	vs, ok := s.engine.RulesetVersions(r.PathValue("name"))
	if !ok {
		s.noRuleset(w, r.PathValue("name"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": vs})
}

// showRulesetVersion answers GET /v1/rulesets/{name}/versions/{version}.
func (s *Server) showRulesetVersion(w http.ResponseWriter, r *http.Request) {
	name, v := r.PathValue("name"), r.PathValue("version")
	vs, ok := s.engine.RulesetVersions(name)
	if !ok {
		s.noRuleset(w, name)
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("version %q is not a number", v), nil)
		return
	}
	i := slices.IndexFunc(vs, func(rs sluice.Ruleset) bool { return rs.Version == n })
	if i < 0 {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("ruleset %s has no version %d: it keeps versions %d to %d", name, n, vs[0].Version, vs[len(vs)-1].Version), nil)
		return
	}
	writeJSON(w, http.StatusOK, vs[i])
}

// noRuleset answers 404 for an unknown ruleset, with the nearest name.
func (s *Server) noRuleset(w http.ResponseWriter, name string) {
	var names []string
	for _, rs := range s.engine.Rulesets() {
		names = append(names, rs.Name)
	}
	writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no ruleset named %q%s", name, suggest.Hint(name, names)), nil)
}

// The metric groups of the catalog as JSON (sluice.MetricGroup), as the
// rulesets are; their values are read through the metric store
// (metricgroups.go).

// listMetricGroups answers GET /v1/metric-groups: every metric group at
// its current version, by name.
func (s *Server) listMetricGroups(w http.ResponseWriter, r *http.Request) {
	gs := s.engine.MetricGroups()
	if gs == nil {
		gs = []sluice.MetricGroup{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"metric_groups": gs})
}

// showMetricGroup answers GET /v1/metric-groups/{name}.
func (s *Server) showMetricGroup(w http.ResponseWriter, r *http.Request) {
	vs, ok := s.engine.MetricGroupVersions(r.PathValue("name"))
	if !ok {
		s.noMetricGroup(w, r.PathValue("name"))
		return
	}
	writeJSON(w, http.StatusOK, vs[len(vs)-1])
}

// listMetricGroupVersions answers GET /v1/metric-groups/{name}/versions:
// the versions the group keeps, oldest first.
func (s *Server) listMetricGroupVersions(w http.ResponseWriter, r *http.Request) {
	vs, ok := s.engine.MetricGroupVersions(r.PathValue("name"))
	if !ok {
		s.noMetricGroup(w, r.PathValue("name"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": vs})
}

// noMetricGroup answers 404 for an unknown metric group, with the nearest
// name.
func (s *Server) noMetricGroup(w http.ResponseWriter, name string) {
	var names []string
	for _, g := range s.engine.MetricGroups() {
		names = append(names, g.Name)
	}
	writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no metric group named %q%s", name, suggest.Hint(name, names)), nil)
}

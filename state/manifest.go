package state

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Manifest says what a job's state belongs to: one entry per source,
// stateful operator and stateful sink of the job, by the ID that prefixes
// its stores and positions, with what it reads or computes. IDs derive from
// what the entries read and compute (not from their place in the plan), so
// that the manifest of an unchanged job is the same whatever else changed
// around it (a projection after an aggregate, say).
//
// A job saves its manifest with its state; a job that starts over a state
// whose manifest differs from its own is refused (a MismatchError), since
// positions and state that belong to other data or another computation
// would silently lose or double-count rows.
type Manifest struct {
	Entries []ManifestEntry `json:"entries"`
}

// ManifestEntry is one source, operator or sink of a job.
type ManifestEntry struct {
	// ID prefixes the entry's stores and positions.
	ID string `json:"id"`
	// Label names it for people: "source orders", "GroupAggregate".
	Label string `json:"label"`
	// What describes what it reads or computes.
	What string `json:"what"`
	// Parts, for an operator whose state is made of parts matched one by
	// one (a metric group's metrics, each by what it computes), names
	// them: a part the new version lacks is let go, a new one starts
	// from zero, the others carry over.
	Parts []string `json:"parts,omitempty"`
}

// manifestStore and manifestKey locate a job's manifest in its backend.
const (
	manifestStore = "$manifest"
	manifestKey   = "manifest"
)

// LoadManifest returns the manifest saved with job's state in b, if any.
func LoadManifest(b Backend, job string) (Manifest, bool, error) {
	var m Manifest
	st, err := b.Store(JobPrefix(job) + manifestStore)
	if err != nil {
		return m, false, fmt.Errorf("cannot open the manifest of job %s: %w", job, err)
	}
	v, ok, err := st.Get([]byte(manifestKey))
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("cannot read the manifest of job %s: %w", job, err)
		}
		return m, false, err
	}
	if err := json.Unmarshal(v, &m); err != nil {
		return m, false, fmt.Errorf("the manifest of job %s is damaged: %w", job, err)
	}
	return m, true, nil
}

// SaveManifest saves m with job's state in b: durable at the next Commit.
func SaveManifest(b Backend, job string, m Manifest) error {
	st, err := b.Store(JobPrefix(job) + manifestStore)
	if err != nil {
		return fmt.Errorf("cannot open the manifest of job %s: %w", job, err)
	}
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := st.Put([]byte(manifestKey), v); err != nil {
		return fmt.Errorf("cannot save the manifest of job %s: %w", job, err)
	}
	return st.Checkpoint()
}

// Diff lists how m differs from old, the manifest of a saved state, one
// line each; none when they agree. Entries of one label (one source
// table, say) found on both sides are paired: "source t: was ..., now
// ...".
func (m Manifest) Diff(old Manifest) []string {
	have := map[string]ManifestEntry{}
	for _, e := range old.Entries {
		have[e.ID] = e
	}
	want := map[string]ManifestEntry{}
	for _, e := range m.Entries {
		want[e.ID] = e
	}
	var gone, added []ManifestEntry
	for _, e := range old.Entries {
		if _, ok := want[e.ID]; !ok {
			gone = append(gone, e)
		}
	}
	for _, e := range m.Entries {
		if _, ok := have[e.ID]; !ok {
			added = append(added, e)
		}
	}
	byLabel := func(es []ManifestEntry) map[string][]ManifestEntry {
		out := map[string][]ManifestEntry{}
		for _, e := range es {
			out[e.Label] = append(out[e.Label], e)
		}
		return out
	}
	goneBy, addedBy := byLabel(gone), byLabel(added)
	var out []string
	for _, e := range added {
		if g := goneBy[e.Label]; len(g) == 1 && len(addedBy[e.Label]) == 1 {
			out = append(out, fmt.Sprintf("%s: the state is of %s; this job's is %s", e.Label, g[0].What, e.What))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s is new (the state has none of it)", e.Label, e.What))
	}
	for _, e := range gone {
		if len(goneBy[e.Label]) == 1 && len(addedBy[e.Label]) == 1 {
			continue // paired above
		}
		out = append(out, fmt.Sprintf("%s: the state holds %s, which this job does not have", e.Label, e.What))
	}
	sort.Strings(out)
	return out
}

// MismatchError is a job refused because the state saved under its name
// belongs to another job, or to an earlier version of it that read or
// computed something else.
type MismatchError struct {
	Job   string
	Diffs []string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("the saved state of job %s belongs to another job (or another version of it):\n  %s",
		e.Job, strings.Join(e.Diffs, "\n  "))
}

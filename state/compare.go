package state

import (
	"fmt"
	"slices"
	"strings"
)

// Compatibility is the verdict of Compare on a job's saved state and a
// new version of the job, in the terms the managed Flink offerings use.
type Compatibility string

const (
	// Compatible: every source, operator and sink of the new version has
	// its state in the saved one, and nothing is dropped.
	Compatible Compatibility = "compatible"
	// PartiallyCompatible: nothing of the saved state is dropped, but
	// the new version has sources, operators or sinks the saved state
	// has none of: they start from zero (an operator) or from their
	// startup position (a source).
	PartiallyCompatible Compatibility = "partially compatible"
	// Incompatible: some of the saved state would be dropped: an
	// operator that computes something else (other keys, another window,
	// other aggregates), a source that reads something else, or one the
	// new version no longer has.
	Incompatible Compatibility = "incompatible"
)

// Change says what becomes of the state of one source, operator or sink
// when a new version of a job starts over a saved state.
type Change string

const (
	// Kept: the same ID on both sides; the state carries over.
	Kept Change = "kept"
	// New: only the new version has it; it starts from zero.
	New Change = "new"
	// Dropped: the saved state of it is discarded. With both IDs set,
	// the new version has an operator of the same kind in its place,
	// which starts from zero.
	Dropped Change = "dropped"
)

// StateChange is what becomes of one entry of the manifests.
type StateChange struct {
	// Label names the source, operator or sink for people ("source
	// orders", "WindowAggregate").
	Label  string `json:"label"`
	Change Change `json:"change"`
	// OldID and NewID are the entry's IDs in the saved state and in the
	// new version; "" on the side that has none.
	OldID string `json:"oldId,omitempty"`
	NewID string `json:"newId,omitempty"`
	// What describes what the entry reads or computes: in the new
	// version, or in the saved state for one the new version lacks.
	What string `json:"what"`
	// Partial: the entry is kept, but some of its parts start from zero
	// or are let go (see ManifestEntry.Parts).
	Partial bool `json:"partial,omitempty"`
	// Reason says why, for people: "window size changed: was
	// TUMBLE(size=[1 min]), now TUMBLE(size=[2 min])".
	Reason string `json:"reason"`
}

// Report is Compare's answer.
type Report struct {
	Verdict Compatibility `json:"verdict"`
	// Changes has one entry per source, stateful operator and stateful
	// sink: those of the new version in its order, then those only the
	// saved state has.
	Changes []StateChange `json:"changes"`
}

// Dropped returns the changes that drop saved state.
func (r Report) Dropped() []StateChange {
	var out []StateChange
	for _, c := range r.Changes {
		if c.Change == Dropped {
			out = append(out, c)
		}
	}
	return out
}

// Compare says what of old, the manifest of a saved state, a job whose
// manifest is m keeps: the state of an entry whose ID is on both sides
// carries over; an entry only m has starts from zero; the state of one
// only old has is dropped. As in Diff, the one entry of a label that m
// gained and the one of that label it lost are taken for one operator
// changed, and the reason says what changed in it.
func Compare(old, m Manifest) Report {
	have := map[string]ManifestEntry{}
	for _, e := range old.Entries {
		have[e.ID] = e
	}
	want := map[string]bool{}
	for _, e := range m.Entries {
		want[e.ID] = true
	}
	var gone, added []ManifestEntry
	for _, e := range old.Entries {
		if !want[e.ID] {
			gone = append(gone, e)
		}
	}
	for _, e := range m.Entries {
		if _, ok := have[e.ID]; !ok {
			added = append(added, e)
		}
	}
	count := func(es []ManifestEntry) map[string]int {
		n := map[string]int{}
		for _, e := range es {
			n[e.Label]++
		}
		return n
	}
	goneN, addedN := count(gone), count(added)
	paired := func(label string) bool { return goneN[label] == 1 && addedN[label] == 1 }
	wasOf := map[string]ManifestEntry{}
	for _, e := range gone {
		if paired(e.Label) {
			wasOf[e.Label] = e
		}
	}

	r := Report{Verdict: Compatible}
	for _, e := range m.Entries {
		c := StateChange{Label: e.Label, NewID: e.ID, What: e.What}
		_, kept := have[e.ID]
		was, changed := wasOf[e.Label]
		switch {
		case kept:
			c.Change, c.OldID, c.Reason = Kept, e.ID, "unchanged: its state carries over"
			if reason, partial := partsReason(have[e.ID].Parts, e.Parts); partial {
				c.Reason, c.Partial = reason, true
			}
		case changed:
			c.Change, c.OldID = Dropped, was.ID
			c.Reason = changeReason(e.Label, was.What, e.What) + "; it starts from zero"
		default:
			c.Change, c.Reason = New, "new: it starts from zero"
			if strings.HasPrefix(e.Label, "source ") {
				c.Reason = "new: it reads from its startup position"
			}
		}
		r.Changes = append(r.Changes, c)
	}
	for _, e := range gone {
		if paired(e.Label) {
			continue
		}
		r.Changes = append(r.Changes, StateChange{Label: e.Label, Change: Dropped, OldID: e.ID, What: e.What,
			Reason: "no longer in the job: its state is dropped"})
	}
	for _, c := range r.Changes {
		switch {
		case c.Change == Dropped:
			r.Verdict = Incompatible
		case (c.Change == New || c.Partial) && r.Verdict == Compatible:
			r.Verdict = PartiallyCompatible
		}
	}
	return r
}

// partsReason says what becomes of the parts of a kept entry, and
// whether some do not carry over.
func partsReason(was, now []string) (string, bool) {
	var added, gone []string
	for _, p := range now {
		if !slices.Contains(was, p) {
			added = append(added, p)
		}
	}
	for _, p := range was {
		if !slices.Contains(now, p) {
			gone = append(gone, p)
		}
	}
	if len(added) == 0 && len(gone) == 0 {
		return "", false
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "new, starting from zero: "+strings.Join(added, ", "))
	}
	if len(gone) > 0 {
		parts = append(parts, "let go: "+strings.Join(gone, ", "))
	}
	return "partly kept: " + strings.Join(parts, "; ") + "; the others carry over", true
}

// changeReason says how what one entry reads or computes changed, from
// the descriptions was and now of its manifest entries.
func changeReason(label, was, now string) string {
	if was == now {
		return "it computes what it did, but is told apart from an alike one by its order in the job, which changed"
	}
	if strings.HasPrefix(label, "source ") || strings.HasPrefix(label, "sink ") {
		verb := "reads"
		if strings.HasPrefix(label, "sink ") {
			verb = "writes"
		}
		return fmt.Sprintf("%s something else: was %s, now %s", verb, was, now)
	}
	wasOp, wasIn, _ := strings.Cut(was, " <- ")
	nowOp, nowIn, _ := strings.Cut(now, " <- ")
	var parts []string
	if wasOp != nowOp {
		parts = append(parts, describeChange(wasOp, nowOp)...)
	}
	if wasIn != nowIn {
		parts = append(parts, fmt.Sprintf("input columns changed: was %s, now %s", wasIn, nowIn))
	}
	return strings.Join(parts, "; ")
}

// describeChange lists what differs between two operator descriptions of
// the form Name(key=[value], ...): each key whose value changed, and
// within a value of that form (a window, TUMBLE(size=[1 min])) the key
// that changed. Descriptions of another form are quoted whole.
func describeChange(was, now string) []string {
	wasName, wasItems, ok1 := splitCall(was)
	nowName, nowItems, ok2 := splitCall(now)
	if !ok1 || !ok2 || wasName != nowName {
		return []string{fmt.Sprintf("changed: was %s, now %s", was, now)}
	}
	var out []string
	seen := map[string]bool{}
	for _, it := range nowItems {
		seen[it.key] = true
		w, ok := lookup(wasItems, it.key)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s added: %s", friendly(it.key), it.value))
		case w != it.value:
			what := friendly(it.key)
			if sub := changedKeys(w, it.value); sub != "" {
				what += " " + sub
			}
			out = append(out, fmt.Sprintf("%s changed: was %s, now %s", what, w, it.value))
		}
	}
	for _, it := range wasItems {
		if !seen[it.key] {
			out = append(out, fmt.Sprintf("%s removed: was %s", friendly(it.key), it.value))
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("changed: was %s, now %s", was, now))
	}
	return out
}

// changedKeys names the keys that differ between two values of the form
// Name(key=[value], ...) of the same Name ("size"), or "".
func changedKeys(was, now string) string {
	wn, wi, ok1 := splitCall(was)
	nn, ni, ok2 := splitCall(now)
	if !ok1 || !ok2 || wn != nn {
		return ""
	}
	var keys []string
	for _, it := range ni {
		if w, ok := lookup(wi, it.key); !ok || w != it.value {
			keys = append(keys, it.key)
		}
	}
	for _, it := range wi {
		if _, ok := lookup(ni, it.key); !ok {
			keys = append(keys, it.key)
		}
	}
	return strings.Join(keys, " and ")
}

// item is one key=[value] of a description; key is "#n" for the n-th
// item of another form.
type item struct{ key, value string }

// splitCall splits "Name(a=[x], b=[y, z], c)" into Name and its items.
func splitCall(s string) (string, []item, bool) {
	open := strings.IndexByte(s, '(')
	if open <= 0 || !strings.HasSuffix(s, ")") {
		return "", nil, false
	}
	body := s[open+1 : len(s)-1]
	var items []item
	depth, start := 0, 0
	add := func(part string) {
		part = strings.TrimSpace(part)
		if k, v, ok := strings.Cut(part, "=["); ok && strings.HasSuffix(v, "]") && !strings.ContainsAny(k, "([ ") {
			items = append(items, item{k, v[:len(v)-1]})
			return
		}
		items = append(items, item{fmt.Sprintf("#%d", len(items)+1), part})
	}
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth--; depth < 0 {
				return "", nil, false // "F(a), G(b)": not one call
			}
		case ',':
			if depth == 0 {
				add(body[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return "", nil, false
	}
	if strings.TrimSpace(body) != "" {
		add(body[start:])
	}
	return s[:open], items, true
}

func lookup(items []item, key string) (string, bool) {
	for _, it := range items {
		if it.key == key {
			return it.value, true
		}
	}
	return "", false
}

// friendly names the keys of operator descriptions for people.
func friendly(key string) string {
	switch key {
	case "groupBy":
		return "grouping keys"
	case "select":
		return "aggregates"
	case "time_col":
		return "time column"
	case "partitionBy":
		return "partition keys"
	case "orderBy":
		return "order"
	case "key":
		return "key"
	case "where":
		return "join condition"
	case "joinType":
		return "join type"
	}
	if strings.HasPrefix(key, "#") {
		return "argument " + key[1:]
	}
	return key
}

package state

import (
	"fmt"
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	entry := func(id, label, what string) ManifestEntry { return ManifestEntry{ID: id, Label: label, What: what} }
	src := entry("j/source-1", "source t", "kafka topic=t")
	win := func(id, size string) ManifestEntry {
		return entry(id, "WindowAggregate", "WindowAggregate(groupBy=[k], window=[TUMBLE(size=["+size+"])], time_col=[ts], select=[COUNT(*)]) <- (STRING, TIMESTAMP(3))")
	}
	agg := func(id, sel, in string) ManifestEntry {
		return entry(id, "GroupAggregate", "GroupAggregate(groupBy=[k], select=["+sel+"]) <- ("+in+")")
	}
	old := Manifest{Entries: []ManifestEntry{src, win("j/w-1", "1 min"), agg("j/g-1", "COUNT(*)", "STRING")}}
	for _, c := range []struct {
		name    string
		m       []ManifestEntry
		verdict Compatibility
		changes []string // label, change, reason
	}{
		{"same", old.Entries, Compatible, []string{
			"source t kept unchanged: its state carries over",
			"WindowAggregate kept unchanged: its state carries over",
			"GroupAggregate kept unchanged: its state carries over"}},
		{"added", append(slices.Clone(old.Entries), entry("j/source-2", "source u", "kafka topic=u"), entry("j/r-1", "Rank", "Rank(x)")),
			PartiallyCompatible, []string{
				"source t kept unchanged: its state carries over",
				"WindowAggregate kept unchanged: its state carries over",
				"GroupAggregate kept unchanged: its state carries over",
				"source u new new: it reads from its startup position",
				"Rank new new: it starts from zero"}},
		{"changed", []ManifestEntry{entry("j/source-9", "source t", "kafka topic=t2"), win("j/w-2", "2 min"), agg("j/g-2", "COUNT(*), MAX($f1)", "STRING, BIGINT")},
			Incompatible, []string{
				"source t dropped reads something else: was kafka topic=t, now kafka topic=t2; it starts from zero",
				"WindowAggregate dropped window size changed: was TUMBLE(size=[1 min]), now TUMBLE(size=[2 min]); it starts from zero",
				"GroupAggregate dropped aggregates changed: was COUNT(*), now COUNT(*), MAX($f1); input columns changed: was (STRING), now (STRING, BIGINT); it starts from zero"}},
		{"removed", []ManifestEntry{src}, Incompatible, []string{
			"source t kept unchanged: its state carries over",
			"WindowAggregate dropped no longer in the job: its state is dropped",
			"GroupAggregate dropped no longer in the job: its state is dropped"}},
		// Two of a label gained and one lost: which one replaces it is
		// not known, so none is paired.
		{"ambiguous", []ManifestEntry{src, win("j/w-2", "2 min"), win("j/w-3", "3 min"), old.Entries[2]}, Incompatible, []string{
			"source t kept unchanged: its state carries over",
			"WindowAggregate new new: it starts from zero",
			"WindowAggregate new new: it starts from zero",
			"GroupAggregate kept unchanged: its state carries over",
			"WindowAggregate dropped no longer in the job: its state is dropped"}},
	} {
		r := Compare(old, Manifest{Entries: c.m})
		var got []string
		for _, ch := range r.Changes {
			got = append(got, fmt.Sprintf("%s %s %s", ch.Label, ch.Change, ch.Reason))
		}
		if r.Verdict != c.verdict || !slices.Equal(got, c.changes) {
			t.Errorf("%s: %s\n  %q\nwant %s\n  %q", c.name, r.Verdict, got, c.verdict, c.changes)
		}
		if len(r.Dropped()) > 0 != (c.verdict == Incompatible) {
			t.Errorf("%s: Dropped() = %v with verdict %s", c.name, r.Dropped(), r.Verdict)
		}
	}
}

package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/state"
)

// A row's origin names the source partition it came from by a number,
// unique among the job's sources, under which stateful operators keep the
// highest offset they folded in. The number must stay with its partition
// for as long as the state lives: a file added to a directory must not
// shift the numbers of the others (the operators would take its rows for
// replays of another file's and drop them), and a file rewritten with
// other content must get a new one (its line numbers start again).
//
// So a job's partitions get their numbers once, from a counter kept with
// its state, and keep them in a table there: by source stage and
// partition name (a file's path; a partition's index for sources whose
// partitions do not come and go), with the partition's version (for a
// file, the length and hash of its first 4 KiB) to tell a rewritten
// partition from one that grew. Entries of partitions that are gone are
// forgotten; the counter never goes back, so a number is never given
// twice. In cluster mode every member must agree on the numbers without
// sharing state: there they are fixed, by the order of the sources, as
// the partitions of Kafka topics do not come and go.

// originsStore is the store of a job's origin table.
const originsStore = "$origins"

// partition is where a source partition's origin number and position live.
type partition struct {
	origin int32
	// key names the partition's position: the stage's ID and the
	// partition's name.
	key string
	// fresh: the partition is new or was rewritten; a position saved
	// under key (of its former content) is not resumed from.
	fresh bool
}

// partitions numbers the partitions of the graph's sources: fixed numbers
// in cluster mode (a stage with Parts) or without a job name, else from
// the job's origin table in opts.State.
func (g *Graph) partitions(opts RunOptions) (map[*Stage][]partition, error) {
	out := map[*Stage][]partition{}
	fixed := opts.Job == ""
	for _, s := range g.Stages {
		if s.Source != nil && s.Parts != nil {
			fixed = true
		}
	}
	if fixed {
		var next int32
		for _, s := range g.Stages {
			src := g.numbered(s)
			if src == nil {
				continue
			}
			n := src.Partitions()
			ps := make([]partition, n)
			_, keeps := src.(PositionSource)
			for p := range ps {
				ps[p] = partition{origin: next + int32(p), key: PositionKey(s.ID, p)}
				if keeps {
					ps[p].origin = int32(p) // its rows keep their upstream origins
				}
			}
			if !keeps {
				next += int32(n)
			}
			out[s] = ps
		}
		return out, nil
	}
	st, err := opts.State.Store(state.JobPrefix(opts.Job) + originsStore)
	if err != nil {
		return nil, fmt.Errorf("cannot open the origin table: %w", err)
	}
	var next int64
	if v, ok, err := st.Get([]byte("n")); err != nil {
		return nil, fmt.Errorf("cannot read the origin table: %w", err)
	} else if ok {
		if next, _ = binary.Varint(v); next < 0 {
			return nil, fmt.Errorf("the origin table is damaged")
		}
	}
	type entry struct {
		origin  int32
		version []byte
	}
	saved := map[string]entry{}
	if err := st.Scan([]byte("p"), func(k, v []byte) bool {
		o, n := binary.Varint(v)
		if n > 0 && o >= 0 && o <= math.MaxInt32 {
			saved[string(k[1:])] = entry{int32(o), bytes.Clone(v[n:])}
		}
		return true
	}); err != nil {
		return nil, fmt.Errorf("cannot read the origin table: %w", err)
	}
	seen := map[string]bool{}
	// The positions of partitions gone or rewritten are forgotten: a
	// rewritten one's would otherwise be resumed from once its new origin
	// is committed.
	var forget []string
	for _, s := range g.Stages {
		src := g.numbered(s)
		if src == nil {
			continue
		}
		named, _ := src.(connector.NamedPartitions)
		_, keeps := src.(PositionSource)
		n := src.Partitions()
		ps := make([]partition, n)
		for p := range ps {
			name := strconv.Itoa(p)
			var version []byte
			if named != nil {
				name = named.PartitionName(p)
				if version, err = named.PartitionVersion(p); err != nil {
					return nil, fmt.Errorf("source %s: %w", s.Name, err)
				}
			}
			key := s.ID + "\x00" + name
			seen[key] = true
			ps[p].key = s.ID + "/" + name
			if keeps {
				ps[p].origin = int32(p) // its rows keep their upstream origins
				continue
			}
			if e, ok := saved[key]; ok && (named == nil || named.SameVersion(p, e.version)) {
				ps[p].origin = e.origin
				if !bytes.Equal(e.version, version) {
					// The partition grew: its version now covers more
					// of it, which tells a later rewrite apart better.
					v := binary.AppendVarint(nil, int64(e.origin))
					if err := st.Put(append([]byte("p"), key...), append(v, version...)); err != nil {
						return nil, fmt.Errorf("cannot write the origin table: %w", err)
					}
				}
				continue
			}
			if next > math.MaxInt32 {
				return nil, fmt.Errorf("source %s: the job has numbered 2^31 source partitions: start it afresh ('state.start-fresh')", s.Name)
			}
			if _, ok := saved[key]; ok && s.Source != nil {
				forget = append(forget, ps[p].key)
			}
			ps[p].origin, ps[p].fresh = int32(next), true
			next++
			v := binary.AppendVarint(nil, int64(ps[p].origin))
			if err := st.Put(append([]byte("p"), key...), append(v, version...)); err != nil {
				return nil, fmt.Errorf("cannot write the origin table: %w", err)
			}
		}
		out[s] = ps
	}
	for k := range saved {
		if !seen[k] {
			if err := st.Delete(append([]byte("p"), k...)); err != nil {
				return nil, fmt.Errorf("cannot write the origin table: %w", err)
			}
			stage, name, _ := strings.Cut(k, "\x00")
			forget = append(forget, stage+"/"+name)
		}
	}
	if len(forget) > 0 {
		if err := opts.State.ForgetPositions(forget); err != nil {
			return nil, fmt.Errorf("cannot forget the positions of files gone: %w", err)
		}
	}
	if err := st.Put([]byte("n"), binary.AppendVarint(nil, next)); err != nil {
		return nil, fmt.Errorf("cannot write the origin table: %w", err)
	}
	return out, st.Checkpoint()
}

// numbered returns the source whose partitions stage s numbers: its own
// for a source stage; its trunk's for a branch other than the first of
// its trunk (the first keeps the trunk's numbers), whose rows get numbers
// of their own so that where two branches' rows meet (a self-join, a
// union) a row of one is not taken for a replay of the other's; else nil.
func (g *Graph) numbered(s *Stage) connector.Source {
	if s.Source != nil {
		return s.Source
	}
	if s.Trunk == nil {
		return nil
	}
	for _, o := range g.Stages {
		if o.Trunk == s.Trunk {
			if o == s {
				return nil
			}
			return s.Trunk.Source
		}
	}
	return nil
}

// claimState makes the job's state in opts.State the graph's: with
// StartFresh, whatever the job's name held is dropped; else a state saved
// by a job whose manifest differs (other sources, other computations) is
// refused with a state.MismatchError, unless AllowStateLoss, with which
// the state of the entries the graph no longer has is dropped and the
// rest kept. Then the graph's manifest is saved, to be committed with the
// first checkpoint.
func (g *Graph) claimState(opts RunOptions) error {
	if opts.StartFresh {
		if err := opts.State.Drop(opts.Job); err != nil {
			return fmt.Errorf("cannot discard the saved state of job %s: %w", opts.Job, err)
		}
	} else {
		old, ok, err := state.LoadManifest(opts.State, opts.Job)
		if err != nil {
			return err
		}
		if ok {
			if diffs := g.Manifest.Diff(old); len(diffs) > 0 {
				if !opts.AllowStateLoss {
					return &state.MismatchError{Job: opts.Job, Diffs: diffs}
				}
				if err := g.dropLost(opts, state.Compare(old, g.Manifest)); err != nil {
					return err
				}
			}
		}
	}
	return state.SaveManifest(opts.State, opts.Job, g.Manifest)
}

// dropLost drops the stores and positions of the entries of a saved state
// that r says the graph does not keep, and logs what it dropped and what
// starts from zero.
func (g *Graph) dropLost(opts RunOptions, r state.Report) error {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	for _, c := range r.Changes {
		switch c.Change {
		case state.Dropped:
			if err := dropEntry(opts.State, c.OldID); err != nil {
				return fmt.Errorf("cannot drop the state of %s (%s) of job %s: %w", c.Label, c.OldID, opts.Job, err)
			}
			logf("job %s: 'state.allow-loss': dropped the state of %s (%s): %s", opts.Job, c.Label, c.OldID, c.Reason)
		case state.New:
			logf("job %s: %s (%s) has no saved state: %s", opts.Job, c.Label, c.NewID, c.Reason)
		}
	}
	return nil
}

// dropEntry drops the state of the manifest entry id: the stores and
// positions named under it ("<id>/<task>", "<id>/<partition>"), as a
// job's are under its name, and the store named id itself (a stateful
// sink's).
func dropEntry(b state.Backend, id string) error {
	if err := b.Drop(id); err != nil {
		return err
	}
	st, err := b.Store(id)
	if err != nil {
		return err
	}
	var keys [][]byte
	if err := st.Scan(nil, func(k, _ []byte) bool {
		keys = append(keys, bytes.Clone(k))
		return true
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := st.Delete(k); err != nil {
			return err
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return st.Checkpoint()
}

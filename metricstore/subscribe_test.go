package metricstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/types"
)

// mirror is what a subscriber holds: the state of each key, built from
// events alone, as a client would keep it.
type mirror struct {
	// vals holds by key the text of each metric that has a value
	// ("12@5", "NULL@5").
	vals  map[string]map[string]string
	types map[string]types.Type
	token Token
	// partial is set between the parts of a commit or snapshot.
	partial bool
}

func newMirror() *mirror {
	return &mirror{vals: map[string]map[string]string{}, types: map[string]types.Type{}}
}

func (m *mirror) apply(t testing.TB, ev *Event) {
	t.Helper()
	if ev.Reset {
		clear(m.vals)
	}
	m.partial = ev.Token.IsZero()
	if !ev.Token.IsZero() {
		m.token = ev.Token
	}
	if ev.Kind == Redefined {
		// A metric whose type changed, or that is gone, has no value.
		for _, vals := range m.vals {
			for name := range vals {
				if i := slices.IndexFunc(ev.Group.Metrics, func(x Metric) bool { return x.Name == name }); i < 0 ||
					!ev.Group.Metrics[i].Type.SameKind(m.types[name]) {
					delete(vals, name)
				}
			}
		}
		for _, x := range ev.Group.Metrics {
			m.types[x.Name] = x.Type
		}
		return
	}
	entries, err := ev.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ev.Metrics {
		m.types[x.Name] = x.Type
	}
	for _, e := range entries {
		k, _, _ := strings.Cut(show(e, ev.Metrics), ":")

		if e.Deleted {
			delete(m.vals, k)
			continue
		}
		vals := map[string]string{}
		for i, x := range ev.Metrics {
			if e.Statuses[i] != NotFound {
				_, v, _ := strings.Cut(show(Entry{Values: e.Values[i : i+1], Statuses: e.Statuses[i : i+1], EventTimes: e.EventTimes[i : i+1]}, ev.Metrics[i:i+1]), "=")
				vals[x.Name] = v
			}
		}
		m.vals[k] = vals
	}
}

// lines shows the keys that have a value of a metric named, as show
// does.
func (m *mirror) lines(metrics []string) []string {
	var out []string
	for k, vals := range m.vals {
		line, any := k+":", false
		for _, name := range metrics {
			v, ok := vals[name]
			if !ok {
				v = "NOT_FOUND"
			}
			any = any || ok
			line += " " + name + "=" + v
		}
		if any {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// stored returns the store's state of keys as a mirror shows it, the
// token of the read and the metrics read.
func stored(t testing.TB, s *Store, group string, keys [][]types.Value, metrics ...string) ([]string, Token, []string) {
	t.Helper()
	r := read(t, s, group, keys, metrics...)
	var out []string
	for _, e := range r.Entries {
		if slices.ContainsFunc(e.Statuses, func(s Status) bool { return s != NotFound }) {
			out = append(out, show(e, r.Metrics))
		}
	}
	slices.Sort(out)
	names := make([]string, len(r.Metrics))
	for i, x := range r.Metrics {
		names[i] = x.Name
	}
	return out, r.Token, names
}

func subscribe(t testing.TB, s *Store, group string, opts SubscribeOptions) *Subscription {
	t.Helper()
	sub, err := s.Subscribe(group, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return sub
}

// next returns the next event, which must be there already.
func next(t testing.TB, sub *Subscription) *Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev, err := sub.Next(ctx)
	if err != nil {
		t.Fatalf("no event: %v", err)
	}
	return ev
}

// drain applies every event there is to m, and returns their
// descriptions.
func drain(t testing.TB, sub *Subscription, m *mirror) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out []string
	for {
		ev, err := sub.Next(ctx)
		if errors.Is(err, context.Canceled) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		m.apply(t, ev)
		out = append(out, describe(t, ev))
	}
}

// describe prints an event: its kind, reset, token number and entries.
func describe(t testing.TB, ev *Event) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(ev.Kind.String())
	if ev.Reset {
		b.WriteString(" reset")
	}
	if !ev.Token.IsZero() {
		fmt.Fprintf(&b, " #%d", ev.Token.seq)
	}
	if ev.Kind == Redefined {
		fmt.Fprintf(&b, " v%d", ev.Group.Version)
	}
	entries, err := ev.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var es []string
	for _, e := range entries {
		es = append(es, show(e, ev.Metrics))
	}
	if ev.Kind == Snapshot {
		slices.Sort(es)
	}
	for _, e := range es {
		b.WriteString(" [" + e + "]")
	}
	return b.String()
}

func clicks(user string, region int32, n, at int64) Change {
	return Change{Key: key(user, region), Values: []types.Value{types.BigIntValue(n), {}, {}}, Mask: []bool{true, false, false}, EventTime: at}
}

func TestSubscribeLiveAndResume(t *testing.T) {
	s := open(t, Options{}, userStats())
	commit(t, s, "user_stats", clicks("ann", 1, 1, 10))
	live := subscribe(t, s, "user_stats", SubscribeOptions{})
	if got := drain(t, live, newMirror()); len(got) != 0 {
		t.Fatalf("a live subscription got what was committed before it: %v", got)
	}
	commit(t, s, "user_stats", clicks("ann", 1, 2, 20), clicks("bob", 1, 5, 21))
	commit(t, s, "user_stats", Change{Key: key("ann", 1), Delete: true})
	m := newMirror()
	wantLines(t, drain(t, live, m), []string{
		"changes #2 [ann,1: clicks=2@20 spend=NOT_FOUND last_page=NOT_FOUND] [bob,1: clicks=5@21 spend=NOT_FOUND last_page=NOT_FOUND]",
		"changes #3 [ann,1: deleted]",
	})
	want, tok, names := stored(t, s, "user_stats", [][]types.Value{key("ann", 1), key("bob", 1)})
	wantLines(t, m.lines(names), want)
	if m.token != tok || live.Token() != tok {
		t.Errorf("mirror at %v, subscription at %v, store at %v", m.token, live.Token(), tok)
	}

	// A subscription from the token of the first event gets what came
	// after it, and from the last one nothing.
	first, _ := ParseToken(fmt.Sprintf("%016x-2", tok.epoch))
	resumed := subscribe(t, s, "user_stats", SubscribeOptions{From: first})
	wantLines(t, drain(t, resumed, newMirror()), []string{"changes #3 [ann,1: deleted]"})
	caughtUp := subscribe(t, s, "user_stats", SubscribeOptions{From: tok})
	if got := drain(t, caughtUp, newMirror()); len(got) != 0 {
		t.Errorf("from the last token: %v", got)
	}
	commit(t, s, "user_stats", clicks("cid", 2, 1, 30))
	for _, sub := range []*Subscription{live, resumed, caughtUp} {
		wantLines(t, drain(t, sub, newMirror()), []string{"changes #4 [cid,2: clicks=1@30 spend=NOT_FOUND last_page=NOT_FOUND]"})
	}

	// A read's token is a place to subscribe from.
	_, tok, _ = stored(t, s, "user_stats", nil)
	fromRead := subscribe(t, s, "user_stats", SubscribeOptions{From: tok})
	commit(t, s, "user_stats", clicks("cid", 2, 2, 40))
	wantLines(t, drain(t, fromRead, newMirror()), []string{"changes #5 [cid,2: clicks=2@40 spend=NOT_FOUND last_page=NOT_FOUND]"})
}

func TestSubscribeSnapshot(t *testing.T) {
	s := open(t, Options{EventSize: 2}, userStats())
	for i := range 5 {
		commit(t, s, "user_stats", clicks(fmt.Sprint("u", i), 1, int64(i), int64(i)))
	}
	sub := subscribe(t, s, "user_stats", SubscribeOptions{Snapshot: true, Metrics: []string{"clicks"}})
	if !sub.Token().IsZero() {
		t.Errorf("token %v before the snapshot", sub.Token())
	}
	m := newMirror()
	events := drain(t, sub, m)
	// Five keys in parts of two: reset on the first, the token on the
	// last.
	if len(events) != 3 || !strings.HasPrefix(events[0], "snapshot reset [") || strings.Contains(events[0], "#") ||
		strings.Contains(events[1], "reset") || !strings.HasPrefix(events[2], "snapshot #5 [") {
		t.Errorf("events:\n%s", strings.Join(events, "\n"))
	}
	want, tok, names := stored(t, s, "user_stats", [][]types.Value{key("u0", 1), key("u1", 1), key("u2", 1), key("u3", 1), key("u4", 1)}, "clicks")
	wantLines(t, m.lines(names), want)
	if sub.Token() != tok {
		t.Errorf("token %v, want %v", sub.Token(), tok)
	}
	// An empty group's snapshot is one event.
	if err := s.Define(Group{Name: "empty", Metrics: []Metric{{Name: "n", Type: types.BigInt}}}); err != nil {
		t.Fatal(err)
	}
	wantLines(t, drain(t, subscribe(t, s, "empty", SubscribeOptions{Snapshot: true}), newMirror()), []string{"snapshot reset #0"})
}

func TestSubscribeTokenTooOld(t *testing.T) {
	// The log keeps the last commit only.
	s := open(t, Options{ChangeLogBytes: 1}, userStats())
	commit(t, s, "user_stats", clicks("ann", 1, 1, 1))
	sub := subscribe(t, s, "user_stats", SubscribeOptions{})
	old := sub.Token()
	commit(t, s, "user_stats", clicks("bob", 1, 1, 2))
	commit(t, s, "user_stats", clicks("ann", 1, 2, 3))
	m := newMirror()
	wantLines(t, drain(t, sub, m), []string{
		"snapshot reset #3 [ann,1: clicks=2@3 spend=NOT_FOUND last_page=NOT_FOUND] [bob,1: clicks=1@2 spend=NOT_FOUND last_page=NOT_FOUND]",
	})
	want, _, names := stored(t, s, "user_stats", [][]types.Value{key("ann", 1), key("bob", 1)})
	wantLines(t, m.lines(names), want)
	// From the old token again: a snapshot too. From the one before the
	// last commit: that commit.
	wantLines(t, drain(t, subscribe(t, s, "user_stats", SubscribeOptions{From: old}), newMirror()), []string{
		"snapshot reset #3 [ann,1: clicks=2@3 spend=NOT_FOUND last_page=NOT_FOUND] [bob,1: clicks=1@2 spend=NOT_FOUND last_page=NOT_FOUND]",
	})
	wantLines(t, drain(t, subscribe(t, s, "user_stats", SubscribeOptions{From: Token{epoch: old.epoch, seq: 2}}), newMirror()), []string{
		"changes #3 [ann,1: clicks=2@3 spend=NOT_FOUND last_page=NOT_FOUND]",
	})
}

func TestSubscribeTokenOfAnotherIncarnation(t *testing.T) {
	s := open(t, Options{}, userStats())
	commit(t, s, "user_stats", clicks("ann", 1, 1, 1))
	_, old, _ := stored(t, s, "user_stats", nil)
	if err := s.Drop("user_stats"); err != nil {
		t.Fatal(err)
	}
	if err := s.Define(userStats()); err != nil {
		t.Fatal(err)
	}
	commit(t, s, "user_stats", clicks("bob", 1, 1, 1))
	commit(t, s, "user_stats", clicks("cid", 1, 1, 1))
	// The same number, another incarnation: a snapshot, not commit 2.
	wantLines(t, drain(t, subscribe(t, s, "user_stats", SubscribeOptions{From: old}), newMirror()), []string{
		"snapshot reset #2 [bob,1: clicks=1@1 spend=NOT_FOUND last_page=NOT_FOUND] [cid,1: clicks=1@1 spend=NOT_FOUND last_page=NOT_FOUND]",
	})
	_, cur, _ := stored(t, s, "user_stats", nil)
	ahead := Token{epoch: cur.epoch, seq: cur.seq + 1}
	if _, err := s.Subscribe("user_stats", SubscribeOptions{From: ahead}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a token ahead of the group: %v", err)
	}
	for _, bad := range []string{"x", "0000000000000000-1", "00000000000000ab", "00000000000000ab-x", "ab-1"} {
		if _, err := ParseToken(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseToken(%q): %v", bad, err)
		}
	}
	if tok, err := ParseToken(cur.String()); err != nil || tok != cur {
		t.Errorf("ParseToken(%q) = %v, %v", cur, tok, err)
	}
}

func TestSubscribeKeysAndMetrics(t *testing.T) {
	s := open(t, Options{}, userStats())
	commit(t, s, "user_stats", clicks("ann", 1, 1, 1), clicks("bob", 1, 1, 1))
	sub := subscribe(t, s, "user_stats", SubscribeOptions{Snapshot: true, Keys: [][]types.Value{key("ann", 1), key("cid", 1)},
		Metrics: []string{"last_page", "clicks"}})
	wantLines(t, drain(t, sub, newMirror()), []string{"snapshot reset #1 [ann,1: last_page=NOT_FOUND clicks=1@1]"})
	commit(t, s, "user_stats", clicks("bob", 1, 2, 2))
	if got := drain(t, sub, newMirror()); len(got) != 0 {
		t.Errorf("a commit of other keys: %v", got)
	}
	if sub.Token().seq != 2 {
		t.Errorf("the token did not move past a commit of other keys: %v", sub.Token())
	}
	commit(t, s, "user_stats", clicks("bob", 1, 3, 3), clicks("cid", 1, 1, 3))
	g := userStats()
	g.Version = 2
	g.Metrics = g.Metrics[:2]
	if err := s.Define(g); err != nil {
		t.Fatal(err)
	}
	commit(t, s, "user_stats", Change{Key: key("ann", 1), Values: []types.Value{types.BigIntValue(9), {}}, Mask: []bool{true, false}, EventTime: 9})
	wantLines(t, drain(t, sub, newMirror()), []string{
		"changes #3 [cid,1: last_page=NOT_FOUND clicks=1@3]",
		"redefined #4 v2",
		"changes #5 [ann,1: last_page=NOT_FOUND clicks=9@9]",
	})
	// Unknown metrics and keys of the wrong shape are refused.
	if _, err := s.Subscribe("user_stats", SubscribeOptions{Metrics: []string{"last_page"}}); err == nil || !strings.Contains(err.Error(), `no metric named "last_page"`) {
		t.Errorf("subscription to a dropped metric: %v", err)
	}
	if _, err := s.Subscribe("user_stats", SubscribeOptions{Keys: [][]types.Value{{types.StringValue("a")}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("subscription to a short key: %v", err)
	}
}

func TestSubscribeReplaceInParts(t *testing.T) {
	s := open(t, Options{EventSize: 2}, userStats())
	commit(t, s, "user_stats", clicks("old", 1, 1, 1))
	sub := subscribe(t, s, "user_stats", SubscribeOptions{Metrics: []string{"clicks"}})
	var changes []Change
	for i := range 3 {
		changes = append(changes, clicks(fmt.Sprint("u", i), 1, int64(i), 5))
	}
	if err := s.Replace("user_stats", changes); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset("user_stats"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, drain(t, sub, newMirror()), []string{
		"changes reset [u0,1: clicks=0@5] [u1,1: clicks=1@5]",
		"changes #2 [u2,1: clicks=2@5]",
		"changes reset #3",
	})
}

// A subscriber that does not read holds up no commit; when it reads
// again, the commits it missed are gone from the log, and it gets a
// snapshot that brings it to the store's state.
func TestSlowSubscriber(t *testing.T) {
	s := open(t, Options{ChangeLogBytes: 10 << 10}, userStats())
	var keys [][]types.Value
	for i := range 50 {
		keys = append(keys, key(fmt.Sprint("u", i), 1))
	}
	slow := subscribe(t, s, "user_stats", SubscribeOptions{})
	m := newMirror()
	for n := range 2000 {
		commit(t, s, "user_stats", clicks(fmt.Sprint("u", n%50), 1, int64(n), int64(n)))
	}
	if st := s.Stats(); st.LogBytes > 11<<10 {
		t.Errorf("the log holds %d bytes, more than its bound", st.LogBytes)
	}
	events := drain(t, slow, m)
	if len(events) != 1 || !strings.HasPrefix(events[0], "snapshot reset #2000 ") {
		t.Fatalf("a subscriber left behind got %d events, first %.80s", len(events), events[0])
	}
	want, tok, names := stored(t, s, "user_stats", keys)
	wantLines(t, m.lines(names), want)
	if m.token != tok {
		t.Errorf("at %v, want %v", m.token, tok)
	}
}

func TestSubscriptionEnds(t *testing.T) {
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"a", "b"} {
		if err := s.Define(Group{Name: g, Metrics: []Metric{{Name: "n", Type: types.BigInt}}}); err != nil {
			t.Fatal(err)
		}
	}
	a := subscribe(t, s, "a", SubscribeOptions{})
	b := subscribe(t, s, "b", SubscribeOptions{})
	errs := make(chan error, 2)
	for _, sub := range []*Subscription{a, b} {
		go func() {
			_, err := sub.Next(context.Background())
			errs <- err
		}()
	}
	if err := s.Drop("a"); err != nil {
		t.Fatal(err)
	}
	var nf *NotFoundError
	if err := <-errs; !errors.As(err, &nf) || nf.Name != "a" {
		t.Errorf("a waiting subscriber of a dropped group: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Errorf("a waiting subscriber of a closed store: %v", err)
	}
	if st := s.Stats(); st.Subscribers != 2 {
		t.Errorf("%d subscribers", st.Subscribers)
	}
	a.Close()
	b.Close()
	if st := s.Stats(); st.Subscribers != 0 {
		t.Errorf("%d subscribers after Close", st.Subscribers)
	}
	if _, err := a.Next(context.Background()); err == nil {
		t.Error("Next after Close")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	s2 := open(t, Options{}, Group{Name: "c", Metrics: []Metric{{Name: "n", Type: types.BigInt}}})
	if _, err := subscribe(t, s2, "c", SubscribeOptions{}).Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next past its context: %v", err)
	}
}

// Random commits, resets, replaces and redefinitions, with subscribers
// that stop and resume from their tokens (some filtered), over a small
// log and small events, with and without spilling: each subscriber's
// state, built from its events alone, is the store's at its token.
func TestSubscribeRandom(t *testing.T) {
	for _, spill := range []bool{false, true} {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("spill=%v/seed=%d", spill, seed), func(t *testing.T) {
				opts := Options{ChangeLogBytes: 4 << 10, EventSize: 7}
				if spill {
					opts.Dir, opts.MemoryBudget = t.TempDir(), 8<<10
				}
				randomRun(t, seed, opts)
			})
		}
	}
}

func randomRun(t *testing.T, seed uint64, opts Options) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	s := open(t, opts, userStats())
	var keys [][]types.Value
	for i := range 120 {
		keys = append(keys, key(fmt.Sprint("u", i), int32(i%3)))
	}
	type follower struct {
		sub  *Subscription
		m    *mirror
		opts SubscribeOptions
	}
	var fs []*follower
	for i := range 8 {
		o := SubscribeOptions{Snapshot: i%2 == 0}
		switch {
		case i >= 6:
			// Fewer keys than a quarter of most commits.
			o.Keys = keys[i : i+2]
		case i >= 4:
			o.Keys = keys[i*10 : i*10+15]
			o.Metrics = []string{"clicks"}
		}
		fs = append(fs, &follower{sub: subscribe(t, s, "user_stats", o), m: newMirror(), opts: o})

	}
	step := 0
	// check brings every subscriber up to date and compares what it holds
	// with the store.
	check := func() {
		t.Helper()
		for i, f := range fs {
			drain(t, f.sub, f.m)
			ks := keys
			if f.opts.Keys != nil {
				ks = f.opts.Keys
			}
			want, tok, names := stored(t, s, "user_stats", ks, f.opts.Metrics...)
			if f.sub.Token() != tok || f.opts.Keys == nil && f.m.token != tok {
				t.Fatalf("subscriber %d at %v (its last event at %v), the store at %v", i, f.sub.Token(), f.m.token, tok)
			}
			if !slices.Equal(f.m.lines(names), want) {
				t.Logf("subscriber %d, step %d:", i, step)
			}
			wantLines(t, f.m.lines(names), want)
		}
	}
	spilled := false
	version := 1
	for st := range 400 {
		step = st
		if step%40 == 39 {
			check()
		}
		spilled = spilled || s.Stats().SpilledKeys > 0
		switch r := rnd.IntN(100); {
		case r < 2:
			if err := s.Reset("user_stats"); err != nil {
				t.Fatal(err)
			}
		case r < 4:
			version++
			g := userStats()
			g.Version = version
			if version%2 == 0 {
				g.Metrics = append(g.Metrics[:2:2], Metric{Name: "extra", Type: types.BigInt})
			}
			if err := s.Define(g); err != nil {
				t.Fatal(err)
			}
		default:
			d, err := s.Definition("user_stats")
			if err != nil {
				t.Fatal(err)
			}
			var changes []Change
			for range 1 + rnd.IntN(40) {
				c := Change{Key: keys[rnd.IntN(len(keys))], EventTime: int64(step)}
				if rnd.IntN(4) == 0 {
					c.Key = keys[6+rnd.IntN(3)]
				}
				if rnd.IntN(10) == 0 {
					c.Delete = true
				} else {
					c.Values = make([]types.Value, len(d.Metrics))
					c.Mask = make([]bool, len(d.Metrics))
					for i, m := range d.Metrics {
						c.Mask[i] = rnd.IntN(2) == 0
						if m.Type.Kind == types.KindDecimal {
							c.Values[i] = types.DecimalValue(int64(rnd.IntN(1000)), 2)
						} else if m.Type.Kind == types.KindBigInt {
							c.Values[i] = types.BigIntValue(int64(rnd.IntN(1000)))
						} else if rnd.IntN(5) > 0 {
							c.Values[i] = types.StringValue(fmt.Sprint("/p", rnd.IntN(50)))
						}
					}
					if rnd.IntN(3) == 0 {
						c.Mask = nil
					}
				}
				changes = append(changes, c)
			}
			if rnd.IntN(30) == 0 {
				err = s.Replace("user_stats", changes)
			} else {
				err = s.Commit("user_stats", changes)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range fs {
			switch rnd.IntN(10) {
			case 0:
				// Stop, and resume from the token held (mid-commit: from the
				// last whole one, dropping what the parts brought).
				f.sub.Close()
				o := f.opts
				o.From, o.Snapshot = f.m.token, false
				f.sub = subscribe(t, s, "user_stats", o)
				if f.m.partial {
					f.m.partial = false
				}
			case 1, 2, 3:
				for range rnd.IntN(4) {
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					ev, err := f.sub.Next(ctx)
					if err != nil {
						break
					}
					f.m.apply(t, ev)
				}
			}
		}
	}
	if opts.Dir != "" && !spilled {
		t.Errorf("nothing spilled")
	}
	check()
}

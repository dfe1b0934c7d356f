package sigma_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/sigma"
)

// The correlation tests run the ruleset form of correlation rules over
// events of their own: each correlation is a metric group over a sliding
// window and a ruleset, and alerts on each event it counts at which its
// condition holds over the time span that ends with the event.

const corrMapping = `table: events
time: ts
fields: {User: user_name, Computer: host, EventID: event_id, Image: image, SourceIp: net.src}
columns: {id: BIGINT, ts: TIMESTAMP(3), event_id: INT}
alert_columns: [id]
alerts_with: {connector: print}
`

const corrDDL = `CREATE TABLE events (id BIGINT, ts TIMESTAMP(3), user_name STRING, host STRING, event_id INT, image STRING,
  net ROW<src STRING>, WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '$DIR/events.jsonl', 'format' = 'json');
`

// corrBase are the detections the sample correlations count.
const corrBase = `title: Failed logon
name: fail
detection: {s: {EventID: 4625}, condition: s}
---
title: Logon
name: ok
detection: {s: {EventID: 4624}, condition: s}
---
title: whoami
name: recon_w
detection: {s: {Image|endswith: '\whoami.exe'}, condition: s}
---
title: net
name: recon_n
detection: {s: {Image|endswith: '\net.exe'}, condition: s}
---
title: quser
name: recon_q
detection: {s: {Image|endswith: '\quser.exe'}, condition: s}
`

// corrEvent is an event of the tests: its id, its time (minutes and
// seconds after 12:00), user, host, event id, image and source address.
type corrEvent struct {
	id         int
	at         string // mm:ss after 12:00
	user, host string
	eventID    int
	image, src string
}

// fail, ok and run make events of the sample kinds.
func fail(id int, at, user, host string) corrEvent {
	return corrEvent{id: id, at: at, user: user, host: host, eventID: 4625}
}
func ok(id int, at, user, host string) corrEvent {
	return corrEvent{id: id, at: at, user: user, host: host, eventID: 4624}
}
func run(id int, at, host, exe string) corrEvent {
	return corrEvent{id: id, at: at, user: "u", host: host, eventID: 4688, image: `C:\Windows\System32\` + exe}
}

func (e corrEvent) json(t *testing.T) string {
	var m, s int
	if _, err := fmt.Sscanf(e.at, "%d:%d", &m, &s); err != nil {
		t.Fatalf("event %d: time %q", e.id, e.at)
	}
	ts := time.Date(2024, 5, 1, 12, m, s, 0, time.UTC).Format("2006-01-02 15:04:05")
	rec := map[string]any{"id": e.id, "ts": ts, "user_name": e.user, "host": e.host, "event_id": e.eventID}
	if e.image != "" {
		rec["image"] = e.image
	}
	if e.src != "" {
		rec["net"] = map[string]string{"src": e.src}
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

// runCorrelations translates rules with corrMapping, runs the ruleset
// form over events and returns the detection alerts (rule: ids) and the
// correlation alerts (rule, group, metric, id).
func runCorrelations(t *testing.T, rules string, events []corrEvent) (map[string][]int, []string) {
	t.Helper()
	var lines []string
	for _, e := range events {
		lines = append(lines, e.json(t))
	}
	return runCorrelationLines(t, rules, strings.Join(lines, "\n")+"\n")
}

func runCorrelationLines(t *testing.T, rules, lines string) (map[string][]int, []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := sigma.ParseMapping("m.yml", []byte(corrMapping))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := sigma.Parse("rules.yml", []byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	rs := sigma.Translate(docs, m)
	if len(rs.Failures) > 0 {
		t.Fatalf("not translated: %v", rs.Failures)
	}
	script := sigma.Script(rs, sigma.ScriptOptions{CreateAlerts: true})
	got, corr := runRulesets(t, rs, strings.ReplaceAll(corrDDL, "$DIR", dir)+script, "")
	sort.Strings(corr)
	if t.Failed() {
		t.Logf("script:\n%s", script)
	}
	return got, corr
}

// Each kind of correlation, and each form of condition, alerts on the
// events at which the condition holds over the time span that ends with
// them, and not on events below the threshold, events whose earlier
// ones have left the time span, other groups' events, or events it does
// not count.
func TestCorrelationKinds(t *testing.T) {
	for _, c := range []struct {
		name   string
		rules  string
		events []corrEvent
		// detections are the detection alerts (rule: ids), correlations
		// the correlation alerts (rule group metric id).
		detections   map[string][]int
		correlations []string
	}{{
		name: "event_count",
		rules: `title: Three failures
name: gte3
level: high
tags: [attack.credential_access, attack.t1110]
correlation: {type: event_count, rules: [fail], group-by: [User], timespan: 5m, condition: {gte: 3}}
---
title: More than two
name: gt2
correlation: {type: event_count, rules: [fail], group-by: [User], timespan: 5m, condition: {gt: 2}}
---
title: Fewer than two
name: lt2
correlation: {type: event_count, rules: [fail], group-by: [User], timespan: 5m, condition: {lt: 2}}
---
title: At most two
name: lte2
correlation: {type: event_count, rules: [fail], group-by: [User], timespan: 5m, condition: {lte: 2}}
---
title: Two
name: eq2
correlation: {type: event_count, rules: [fail], group-by: [User], timespan: 5m, condition: {eq: 2}}
---
title: Two or three
name: range
correlation: {type: event_count, rules: [fail], group-by: [User], timespan: 5m, condition: {gt: 1, lte: 3}}
`,
		// alice's failures count 1, 2, -, 3, 3 (12:01, 12:04 and 12:06
		// within 5 minutes; 12:00 has left), 1 (12:12: the others have
		// left); bob's 1, 1 (12:02 has left), 2. alice's logon (4) is
		// not counted: it alerts on nothing, whatever the count.
		events: []corrEvent{
			fail(1, "00:00", "alice", "h1"), fail(2, "01:00", "alice", "h1"), fail(3, "02:00", "bob", "h1"),
			ok(4, "03:00", "alice", "h1"), fail(5, "04:00", "alice", "h1"), fail(6, "06:00", "alice", "h1"),
			fail(7, "12:00", "alice", "h1"), fail(8, "13:00", "bob", "h1"), fail(9, "13:30", "bob", "h1"),
		},
		// ok is a detection no correlation refers to: it alerts.
		detections: map[string][]int{"ok": {4}},
		correlations: []string{
			"gte3 User=alice 3.0 5", "gte3 User=alice 3.0 6",
			"gt2 User=alice 3.0 5", "gt2 User=alice 3.0 6",
			"lt2 User=alice 1.0 1", "lt2 User=bob 1.0 3", "lt2 User=alice 1.0 7", "lt2 User=bob 1.0 8",
			"lte2 User=alice 1.0 1", "lte2 User=alice 2.0 2", "lte2 User=bob 1.0 3", "lte2 User=alice 1.0 7", "lte2 User=bob 1.0 8", "lte2 User=bob 2.0 9",
			"eq2 User=alice 2.0 2", "eq2 User=bob 2.0 9",
			"range User=alice 2.0 2", "range User=alice 3.0 5", "range User=alice 3.0 6", "range User=bob 2.0 9",
		},
	}, {
		name: "value_count",
		rules: `title: Password spraying
name: spray
correlation: {type: value_count, rules: [fail], group-by: [Computer], timespan: 10m, condition: {field: User, gte: 3}}
`,
		// h1's users: alice, bob, bob (2), then carol's logon (not
		// counted, though a third user), dave (3: alert); then erin
		// alone (the others have left), frank, frank again (2).
		events: []corrEvent{
			fail(1, "00:00", "alice", "h1"), fail(2, "01:00", "bob", "h1"), fail(3, "02:00", "bob", "h1"),
			fail(4, "03:00", "carol", "h2"), ok(5, "04:00", "carol", "h1"), fail(6, "05:00", "dave", "h1"),
			fail(7, "20:00", "erin", "h1"), fail(8, "21:00", "frank", "h1"), fail(9, "22:00", "frank", "h1"),
		},
		detections:   map[string][]int{"ok": {5}},
		correlations: []string{"spray Computer=h1 3.0 6"},
	}, {
		name: "temporal",
		rules: `title: Recon
name: recon
level: critical
correlation: {type: temporal, rules: [recon_w, recon_n, recon_q], group-by: [Computer], timespan: 2m, generate: true}
---
title: Some recon
name: some_recon
correlation: {type: temporal, rules: [recon_w, recon_n, recon_q], group-by: [Computer], timespan: 2m, condition: {gte: 2}}
`,
		// h1: whoami, net, (notepad), quser within 2 minutes: all
		// three at 5; then whoami alone. h2: quser, then whoami and net
		// 4 and 5 minutes later (quser has left), then quser when they
		// have left.
		events: []corrEvent{
			run(1, "00:00", "h1", "whoami.exe"), run(2, "00:30", "h1", "net.exe"), run(3, "00:40", "h2", "quser.exe"),
			run(4, "01:00", "h1", "notepad.exe"), run(5, "01:30", "h1", "quser.exe"), run(6, "05:00", "h2", "whoami.exe"),
			run(7, "06:00", "h2", "net.exe"), run(8, "09:00", "h2", "quser.exe"), run(9, "10:00", "h1", "whoami.exe"),
		},
		// generate: true of recon: the rules alert on their own too
		// (some_recon does not say so, but does not silence them).
		detections: map[string][]int{"recon_w": {1, 6, 9}, "recon_n": {2, 7}, "recon_q": {3, 5, 8}},
		correlations: []string{
			"recon Computer=h1 3.0 5",
			"some_recon Computer=h1 2.0 2", "some_recon Computer=h1 3.0 5", "some_recon Computer=h2 2.0 7",
		},
	}, {
		name: "temporal_ordered",
		rules: `title: Failure then logon
name: fail_then_ok
correlation: {type: temporal_ordered, rules: [fail, ok], group-by: [User], timespan: 10m}
`,
		// alice logs on before failing (no), then after (alert at 4),
		// and fails again while the order still holds (5). bob's logon
		// comes 18 minutes after his failure; carol's failure and logon
		// are at one time (not before).
		events: []corrEvent{
			ok(1, "00:00", "alice", "h1"), fail(2, "01:00", "alice", "h1"), fail(3, "02:00", "bob", "h1"),
			ok(4, "05:00", "alice", "h1"), fail(5, "06:00", "alice", "h1"), ok(6, "20:00", "bob", "h1"),
			ok(7, "21:00", "carol", "h1"), fail(8, "21:00", "carol", "h1"),
		},
		correlations: []string{"fail_then_ok User=alice 2.0 4", "fail_then_ok User=alice 2.0 5"},
	}, {
		name: "keys",
		rules: `title: Failures anywhere
name: anywhere
correlation: {type: event_count, rules: [fail], timespan: 1m, condition: {gte: 3}}
---
title: Failures from one address
name: by_source
correlation: {type: event_count, rules: [fail], group-by: [SourceIp, User], timespan: 1m, condition: {gte: 2}}
`,
		// Without group-by, all events are one group; SourceIp is a
		// field of a ROW column, keyed through a view.
		events: []corrEvent{
			{id: 1, at: "00:00", user: "a", eventID: 4625, src: "10.0.0.1"},
			{id: 2, at: "00:20", user: "a", eventID: 4625, src: "10.0.0.2"},
			{id: 3, at: "00:40", user: "a", eventID: 4625, src: "10.0.0.1"},
			{id: 4, at: "02:00", user: "a", eventID: 4625, src: "10.0.0.2"},
			{id: 5, at: "02:10", user: "b", eventID: 4625, src: "10.0.0.2"},
		},
		correlations: []string{"anywhere  3.0 3", "by_source SourceIp=10.0.0.1, User=a 2.0 3"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, corr := runCorrelations(t, corrBase+"---\n"+c.rules, c.events)
			want := slices.Clone(c.correlations)
			sort.Strings(want)
			if !slices.Equal(corr, want) {
				t.Errorf("correlation alerts:\n%s\nwant:\n%s", strings.Join(corr, "\n"), strings.Join(want, "\n"))
			}
			if len(got) != len(c.detections) {
				t.Errorf("detection alerts %v, want %v", got, c.detections)
			}
			for rule, ids := range c.detections {
				if !slices.Equal(got[rule], ids) {
					t.Errorf("%s alerts on %v, want %v", rule, got[rule], ids)
				}
			}
		})
	}
}

// corrModel is a correlation of the differential test, and what it
// alerts on by a direct reading of the documented semantics.
type corrModel struct {
	name, typ string
	rules     []int // event ids the rules match: rule r matches event_id rules[r]
	groupBy   []string
	span      int // seconds
	ops       [][2]string
}

// corrDiffEvent is an event of the differential test.
type corrDiffEvent struct {
	id, t, eventID int
	user, host     string
	image          string // "" when missing
}

func (m corrModel) yaml() string {
	names := map[int]string{1: "a", 2: "b", 3: "c"}
	var rules []string
	for _, r := range m.rules {
		rules = append(rules, names[r])
	}
	cond := ""
	if len(m.ops) > 0 {
		var parts []string
		if m.typ == "value_count" {
			parts = append(parts, "field: Image")
		}
		for _, op := range m.ops {
			parts = append(parts, op[0]+": "+op[1])
		}
		cond = ", condition: {" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("title: %s\nname: %s\ncorrelation: {type: %s, rules: [%s], group-by: [%s], timespan: %ds%s}\n",
		m.name, m.name, m.typ, strings.Join(rules, ", "), strings.Join(m.groupBy, ", "), m.span, cond)
}

// alerts returns the alerts of m over evs (rule group metric id): for
// each event it counts, the group's events up to it (in arrival order)
// no more than span seconds older, and the condition on them.
func (m corrModel) alerts(evs []corrDiffEvent) []string {
	key := func(e corrDiffEvent) string {
		var parts []string
		for _, g := range m.groupBy {
			switch g {
			case "Computer":
				parts = append(parts, "Computer="+e.host)
			case "User":
				parts = append(parts, "User="+e.user)
			}
		}
		return strings.Join(parts, ", ")
	}
	var out []string
	for i, e := range evs {
		if !slices.Contains(m.rules, e.eventID) {
			continue
		}
		var win []corrDiffEvent
		for _, x := range evs[:i+1] {
			if key(x) == key(e) && x.t >= e.t-m.span {
				win = append(win, x)
			}
		}
		seen := func(r int) bool {
			return slices.ContainsFunc(win, func(x corrDiffEvent) bool { return x.eventID == r })
		}
		value, holds := 0, true
		switch m.typ {
		case "event_count":
			for _, x := range win {
				if slices.Contains(m.rules, x.eventID) {
					value++
				}
			}
		case "value_count":
			vals := map[string]bool{}
			for _, x := range win {
				if slices.Contains(m.rules, x.eventID) && x.image != "" {
					vals[x.image] = true
				}
			}
			value = len(vals)
		case "temporal":
			for _, r := range m.rules {
				if seen(r) {
					value++
				}
			}
		case "temporal_ordered":
			first, last := -1, -1
			for _, x := range win {
				if x.eventID == m.rules[0] && first < 0 {
					first = x.t
				}
				if x.eventID == m.rules[1] {
					last = max(last, x.t)
				}
			}
			for _, r := range m.rules {
				if seen(r) {
					value++
				}
			}
			holds = first >= 0 && last >= 0 && first < last
		}
		ops := m.ops
		if len(ops) == 0 {
			ops = [][2]string{{"gte", fmt.Sprint(len(m.rules))}}
		}
		for _, op := range ops {
			var n int
			fmt.Sscan(op[1], &n)
			switch op[0] {
			case "gte":
				holds = holds && value >= n
			case "gt":
				holds = holds && value > n
			case "lte":
				holds = holds && value <= n
			case "lt":
				holds = holds && value < n
			case "eq":
				holds = holds && value == n
			}
		}
		if holds {
			out = append(out, fmt.Sprintf("%s %s %d.0 %d", m.name, key(e), value, e.id))
		}
	}
	return out
}

// TestCorrelationDifferential: random correlations of every kind and
// condition over random events (times rising, some equal) alert, in the
// ruleset form, on exactly the events a direct evaluation of the
// semantics says.
func TestCorrelationDifferential(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			var evs []corrDiffEvent
			var lines strings.Builder
			at := 0
			for id := range 250 {
				at += []int{0, 1, 3, 5, 10, 20, 40}[rng.IntN(7)]
				e := corrDiffEvent{id: id, t: at, eventID: 1 + rng.IntN(4), user: fmt.Sprintf("u%d", rng.IntN(3)), host: fmt.Sprintf("h%d", rng.IntN(2))}
				rec := map[string]any{"id": e.id, "ts": time.Date(2024, 5, 1, 12, 0, at, 0, time.UTC).Format("2006-01-02 15:04:05"),
					"user_name": e.user, "host": e.host, "event_id": e.eventID}
				if rng.IntN(4) > 0 {
					e.image = fmt.Sprintf("img%d", rng.IntN(4))
					rec["image"] = e.image
				}
				evs = append(evs, e)
				line, _ := json.Marshal(rec)
				lines.Write(append(line, '\n'))
			}
			rules := []string{
				"title: a\nname: a\ndetection: {s: {EventID: 1}, condition: s}\n",
				"title: b\nname: b\ndetection: {s: {EventID: 2}, condition: s}\n",
				"title: c\nname: c\ndetection: {s: {EventID: 3}, condition: s}\n",
			}
			var models []corrModel
			var want []string
			groupBys := [][]string{nil, {"Computer"}, {"User"}, {"Computer", "User"}}
			for i := range 12 {
				m := corrModel{name: fmt.Sprintf("k%d", i), typ: []string{"event_count", "value_count", "temporal", "temporal_ordered"}[i%4],
					groupBy: groupBys[rng.IntN(len(groupBys))], span: []int{30, 60, 120}[rng.IntN(3)]}
				perm := rng.Perm(3)
				switch m.typ {
				case "event_count":
					m.rules = []int{1 + perm[0]}
					if rng.IntN(2) == 0 {
						m.rules = append(m.rules, 1+perm[1])
					}
				case "value_count":
					m.rules = []int{1 + perm[0]}
				case "temporal":
					m.rules = []int{1 + perm[0], 1 + perm[1], 1 + perm[2]}[:2+rng.IntN(2)]
				case "temporal_ordered":
					m.rules = []int{1 + perm[0], 1 + perm[1]}
				}
				n := fmt.Sprint(1 + rng.IntN(4))
				switch {
				case m.typ == "temporal" && rng.IntN(2) == 0:
					m.ops = [][2]string{{"gte", "2"}}
				case m.typ == "temporal" || m.typ == "temporal_ordered":
				case rng.IntN(6) == 0:
					m.ops = [][2]string{{"gt", "1"}, {"lte", "3"}}
				default:
					m.ops = [][2]string{{[]string{"gte", "gt", "lt", "lte", "eq"}[rng.IntN(5)], n}}
				}
				models = append(models, m)
				rules = append(rules, m.yaml())
				want = append(want, m.alerts(evs)...)
			}
			sort.Strings(want)
			_, got := runCorrelationLines(t, strings.Join(rules, "---\n"), lines.String())
			if len(want) < 50 {
				t.Fatalf("%d alerts: the test tests little", len(want))
			}
			t.Logf("%d correlation alerts", len(want))
			if !slices.Equal(got, want) {
				for _, m := range models {
					var g, w []string
					for _, a := range got {
						if strings.HasPrefix(a, m.name+" ") {
							g = append(g, a)
						}
					}
					for _, a := range want {
						if strings.HasPrefix(a, m.name+" ") {
							w = append(w, a)
						}
					}
					if !slices.Equal(g, w) {
						t.Errorf("%s", m.yaml())
						for _, a := range w {
							if !slices.Contains(g, a) {
								t.Errorf("  missing %s", a)
							}
						}
						for _, a := range g {
							if !slices.Contains(w, a) {
								t.Errorf("  unexpected %s", a)
							}
						}
					}
				}
			}
		})
	}
}

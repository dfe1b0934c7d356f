package sluice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/exec"
	"github.com/sluicesql/sluice/exec/kshuffle"
	"github.com/sluicesql/sluice/internal/config"
	"github.com/sluicesql/sluice/internal/kafkasecurity"
	"github.com/sluicesql/sluice/physical"
	"github.com/sluicesql/sluice/plan"
	"github.com/sluicesql/sluice/state/kafkalog"
	"github.com/sluicesql/sluice/types"
)

// Cluster mode: with 'cluster.group-id' set, a job runs as one member of
// that Kafka consumer group. Every process started with the same job and
// group takes a share of the partitions: of the Kafka sources' topics and
// of the job's shuffle topics, which carry the rows between a source and a
// re-keying stage (GROUP BY, window aggregation, join). The group's assignment
// decides which process reads what; there is no other coordination.
//
// Each assignment is one run of the job's graph over the assigned
// partitions, with its state restored from the job's changelog in Kafka.
// When the group rebalances (a process joins, leaves or dies), every member
// stops its run gracefully before the rebalance completes: sources stop,
// the last checkpoint commits the state, the positions and the output of
// the revoked partitions in one transaction, and only then may the new
// owner start and restore them. A process that dies instead loses only its
// open transaction; its partitions restart from the last committed
// checkpoint.

// clusterJob is the state of a job in cluster mode in this process.
type clusterJob struct {
	e        *Engine
	name     string
	group    string
	brokers  []string
	sec      kafkasecurity.Security // of every client: 'state.kafka.properties.*'
	txnID    string
	env      physical.Env
	sinks    []*plan.Sink
	cfg      map[string]string
	interval time.Duration
	job      *Job

	member *kgo.Client
	// groupMeta returns the member's ID and generation (a test makes
	// the member stale).
	groupMeta func() (string, int32)
	topicIDs  map[string][16]byte
	topics    []string       // what the member subscribes to
	shuffle   map[string]int // shuffle topics and their partitions

	mu       sync.Mutex
	assigned map[string][]int32
	cur      *clusterRun
	stopping bool
	wake     chan struct{}
}

// clusterRun is one run of the graph over one assignment.
type clusterRun struct {
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func (r *clusterRun) halt() { r.stopOnce.Do(func() { close(r.stop) }) }

// shuffleTopic names the shuffle topic of operator id of the job.
func shuffleTopic(group, id string) string {
	return "sluice-" + group + "-" + strings.NewReplacer("/", ".", " ", "_").Replace(id)
}

// startCluster starts job name as a member of its consumer group.
func (e *Engine) startCluster(ctx context.Context, id, name string, env physical.Env, cfg map[string]string,
	interval time.Duration, before func(), sinks []*plan.Sink) (*Job, error) {
	group := cfg[config.ClusterGroupID]
	if cfg[config.StateBackend] != "kafka" {
		return nil, errors.New("cluster mode ('cluster.group-id') keeps the state in Kafka: set 'state.backend' = 'kafka' and 'state.kafka.bootstrap.servers'")
	}
	brokers, sec, err := stateKafka(cfg)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		interval = time.Second
	}
	// The transactional ID is the process's: a process restarted with the
	// same 'cluster.instance-id' fences its dead predecessor's open
	// transaction at once; without one, readers wait for the broker to
	// time it out ('cluster.transaction-timeout').
	instance, static := cfg[config.ClusterInstanceID], cfg[config.ClusterInstanceID] != ""
	if !static {
		suffix := make([]byte, 6)
		if _, err := rand.Read(suffix); err != nil {
			return nil, err
		}
		instance = hex.EncodeToString(suffix)
	}
	cj := &clusterJob{e: e, name: name, group: group, brokers: brokers, sec: sec, env: env, sinks: sinks,
		cfg: cfg, interval: interval, shuffle: map[string]int{}, wake: make(chan struct{}, 1), topicIDs: map[string][16]byte{},
		txnID: cmpOr(cfg[config.StateKafkaTransactionalID], "sluice-"+group) + "-" + instance}

	// A first build over every partition checks the plan and names the
	// topics the member subscribes to.
	probe := env
	var sourceTopics []string
	probe.Cluster = &physical.Cluster{
		Parts: func(table, _ string, src connector.Source) ([]int, error) {
			tps, err := topicPartitions(table, src)
			if err != nil {
				return nil, err
			}
			for _, tp := range tps {
				sourceTopics = append(sourceTopics, tp.topic)
			}
			return nil, nil
		},
		Shuffle: func(id string, schema []types.Type, partitions, writers int, bounded bool) (connector.Source, []int, func(int, []int) (exec.Output, error), error) {
			cj.shuffle[shuffleTopic(group, id)] = partitions
			src, err := cj.shuffleSource(id, schema, partitions, writers, bounded)
			return src, nil, nil, err
		},
	}
	if _, err := physical.Build(probe, sinks...); err != nil {
		return nil, e.positionTableError(err)
	}
	seen := map[string]bool{}
	for _, t := range sourceTopics {
		if !seen[t] {
			seen[t] = true
			cj.topics = append(cj.topics, t)
		}
	}
	for t := range cj.shuffle {
		cj.topics = append(cj.topics, t)
	}
	sort.Strings(cj.topics)

	// The shuffle topics must exist before the group assigns them.
	adm, err := cj.client()
	if err != nil {
		return nil, err
	}
	for t, n := range cj.shuffle {
		if err := kshuffle.EnsureTopic(ctx, adm, t, n, 0); err != nil {
			adm.Close()
			return nil, fmt.Errorf("cluster mode: %w", cj.sec.Classify(err))
		}
	}
	adm.Close()

	mopts := []kgo.Opt{
		kgo.SeedBrokers(cj.brokers...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(cj.topics...),
		kgo.Balancers(kgo.StickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(durationOption(cfg, config.ClusterSessionTimeout, 10*time.Second)),
		kgo.RebalanceTimeout(durationOption(cfg, config.ClusterRebalanceTimeout, 60*time.Second)),
		kgo.FetchMaxBytes(1 << 10),
		kgo.OnPartitionsAssigned(cj.onAssigned),
		kgo.OnPartitionsRevoked(cj.onRevoked),
		kgo.OnPartitionsLost(cj.onLost),
	}
	mopts = append(mopts, sec.Opts...)
	if static {
		// Static membership: a restarted process gets its partitions
		// back without a rebalance of the others.
		mopts = append(mopts, kgo.InstanceID(instance))
	}
	if w := e.opts.Log; w != nil {
		// The group's errors (a session timeout the broker refuses, say)
		// would otherwise only show as a member that never runs.
		mopts = append(mopts, kgo.WithLogger(kgo.BasicLogger(w, kgo.LogLevelError, func() string {
			return fmt.Sprintf("job %s, member %s of group %s: kafka: ", name, cj.txnID, group)
		})))
	}
	member, err := kgo.NewClient(mopts...)
	if err != nil {
		return nil, fmt.Errorf("cluster mode: cannot join group %s: %w", group, err)
	}
	// The member only takes part in the group; the runs read the partitions.
	member.PauseFetchTopics(cj.topics...)
	cj.member, cj.groupMeta = member, member.GroupMetadata
	if before != nil {
		before()
	}

	jctx, cancel := context.WithCancel(ctx)
	j := &Job{ID: id, Name: name, Metrics: &exec.Metrics{}, session: e, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	cj.job = j
	e.trackJob(j)
	go func() {
		select {
		case <-j.stop:
		case <-jctx.Done():
		}
		cj.mu.Lock()
		cj.stopping = true
		cur := cj.cur
		cj.mu.Unlock()
		if cur != nil {
			cur.halt()
		}
		select {
		case cj.wake <- struct{}{}:
		default:
		}
	}()
	warnAt, _ := config.WarnSize(cfg) // checked by start
	go func() {
		defer j.end()
		defer e.untrackJob(j)
		defer cancel()
		unwatch := e.watchState(j, warnAt)
		err := cj.loop(jctx)
		unwatch()
		member.Close() // leaves the group: the others take the partitions over
		if static {
			// A static member does not leave by closing; say it, so that
			// the others need not wait for its session to time out.
			if lerr := cj.leave(instance); lerr != nil {
				cj.logf("cannot leave the group: %v", lerr)
			}
		}
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		j.err = redact.Error(err, e.secrets()...)
	}()
	return j, nil
}

// client returns a client of the job's cluster with its security and
// opts.
func (cj *clusterJob) client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(cj.brokers...)}, cj.sec.Opts...), opts...)...)
}

func durationOption(cfg map[string]string, key string, def time.Duration) time.Duration {
	if v, ok := cfg[key]; ok {
		if d, err := connector.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return def
}

type topicPartition struct {
	topic string
	part  int32
}

// topicPartitions returns the Kafka partition each partition of a source
// reads; only Kafka sources can be shared out by a consumer group.
func topicPartitions(table string, src connector.Source) ([]topicPartition, error) {
	ks, ok := src.(interface{ TopicPartitions() []string })
	if !ok {
		return nil, fmt.Errorf("cluster mode reads Kafka tables only: table %s is not one (a consumer group cannot share it out)", table)
	}
	var out []topicPartition
	for _, s := range ks.TopicPartitions() {
		i := strings.LastIndexByte(s, '/')
		p, err := strconv.Atoi(s[i+1:])
		if i < 0 || err != nil {
			return nil, fmt.Errorf("table %s: bad partition %q", table, s)
		}
		out = append(out, topicPartition{s[:i], int32(p)})
	}
	return out, nil
}

// shuffleSource returns the reading end of the shuffle topic of operator
// id.
func (cj *clusterJob) shuffleSource(id string, schema []types.Type, partitions, writers int, bounded bool) (connector.Source, error) {
	return kshuffle.NewSource(kshuffle.SourceOptions{Topic: shuffleTopic(cj.group, id), Partitions: partitions,
		Schema: schema, Writers: writers, Bounded: bounded, Brokers: cj.brokers, ClientOpts: cj.sec.Opts})
}

func (cj *clusterJob) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	cj.mu.Lock()
	if cj.assigned == nil {
		cj.assigned = map[string][]int32{}
	}
	for t, ps := range assigned {
		cj.assigned[t] = append(cj.assigned[t], ps...)
	}
	cj.mu.Unlock()
	select {
	case cj.wake <- struct{}{}:
	default:
	}
}

// onRevoked hands the revoked partitions over: the current run stops and
// commits before the rebalance may go on.
func (cj *clusterJob) onRevoked(_ context.Context, _ *kgo.Client, _ map[string][]int32) {
	cj.handOff()
}

// onLost: the group expired this member; its run stops, and its last
// checkpoint is refused (errFenced): the partitions are someone else's by
// now.
func (cj *clusterJob) onLost(_ context.Context, _ *kgo.Client, _ map[string][]int32) {
	cj.handOff()
}

func (cj *clusterJob) handOff() {
	cj.mu.Lock()
	cj.assigned = nil
	cur := cj.cur
	cj.mu.Unlock()
	if cur != nil {
		cur.halt()
		<-cur.done
	}
}

// txnAborted reports whether err is the broker's refusal of a checkpoint
// whose transaction it aborted: the producer's epoch moved on.
func txnAborted(err error) bool {
	return errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.ProducerFenced)
}

// errFenced is a checkpoint the consumer group refused: this member is no
// longer the one the group gave the partitions to.
var errFenced = errors.New("the consumer group has moved on without this member")

// commitOffsets commits, in the checkpoint's transaction, the group's
// offsets of the partitions this member read (the record after each
// position), with the member's generation: the broker refuses them, and
// so the checkpoint, to a member of an older generation. The offsets also
// let Kafka's tools show the job's lag.
func (cj *clusterJob) commitOffsets(ctx context.Context, cl *kgo.Client, keys map[string]topicPartition, resume map[string]func(int64) int64, pos map[string]int64) error {
	byTopic := map[string][]kmsg.TxnOffsetCommitRequestTopicPartition{}
	for k, off := range pos {
		tp, ok := keys[k]
		if !ok {
			continue
		}
		p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		next := off + 1
		if f := resume[k]; f != nil {
			next = f(off) // a changelog source's positions number rows, not records
		}
		p.Partition, p.Offset, p.LeaderEpoch = tp.part, next, -1
		byTopic[tp.topic] = append(byTopic[tp.topic], p)
	}
	if len(byTopic) == 0 {
		return nil
	}
	member, gen := cj.groupMeta()
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("cannot commit offsets: %w", err)
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = cj.txnID, pid, epoch, cj.group
	addResp, err := add.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(addResp.ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("cannot add offsets to the transaction: %w", err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = cj.txnID, cj.group, pid, epoch
	req.Generation, req.MemberID = gen, member
	for topic, ps := range byTopic {
		t := kmsg.NewTxnOffsetCommitRequestTopic()
		t.Topic, t.Partitions = topic, ps
		if t.TopicID, err = cj.topicID(ctx, cl, topic); err != nil {
			return err
		}
		req.Topics = append(req.Topics, t)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("cannot commit offsets: %w", err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				if errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.UnknownMemberID) ||
					errors.Is(err, kerr.FencedInstanceID) || errors.Is(err, kerr.RebalanceInProgress) {
					return fmt.Errorf("%w (%s partition %d: %v)", errFenced, t.Topic, p.Partition, err)
				}
				return fmt.Errorf("cannot commit offsets of %s partition %d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// topicID returns the ID of topic (newer versions of the offset commit
// name topics by ID).
func (cj *clusterJob) topicID(ctx context.Context, cl *kgo.Client, topic string) ([16]byte, error) {
	cj.mu.Lock()
	id, ok := cj.topicIDs[topic]
	cj.mu.Unlock()
	if ok {
		return id, nil
	}
	tds, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err == nil {
		err = tds.Error()
	}
	if err != nil {
		return id, fmt.Errorf("cannot look topic %s up: %w", topic, err)
	}
	id = tds[topic].ID
	cj.mu.Lock()
	cj.topicIDs[topic] = id
	cj.mu.Unlock()
	return id, nil
}

// leave takes a static member out of the group.
func (cj *clusterJob) leave(instance string) error {
	cl, err := cj.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = cj.group
	m := kmsg.NewLeaveGroupRequestMember()
	m.InstanceID = &instance
	req.Members = append(req.Members, m)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	for _, m := range resp.Members {
		if err := kerr.ErrorForCode(m.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
			return err
		}
	}
	return nil
}

// logf writes a line about the member to the engine's log, secrets
// masked.
func (cj *clusterJob) logf(format string, args ...any) {
	if cj.e.logf != nil {
		cj.e.logf("job %s, member %s of group %s: %s", cj.name, cj.txnID, cj.group, fmt.Sprintf(format, args...))
	}
}

// formatAssignment lists an assignment, topics in order.
func formatAssignment(a map[string][]int32) string {
	topics := make([]string, 0, len(a))
	for t := range a {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	var b strings.Builder
	for i, t := range topics {
		if i > 0 {
			b.WriteString(", ")
		}
		ps := append([]int32(nil), a[t]...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		fmt.Fprintf(&b, "%s %v", t, ps)
	}
	return b.String()
}

// loop runs the graph over each assignment until the job is stopped or a
// run ends by itself (bounded input) or fails.
func (cj *clusterJob) loop(ctx context.Context) error {
	aborted := 0 // runs in a row whose checkpoint the broker aborted
	for {
		select {
		case <-cj.wake:
		case <-ctx.Done():
			return nil
		}
		cj.mu.Lock()
		if cj.stopping {
			cj.mu.Unlock()
			return nil
		}
		if len(cj.assigned) == 0 {
			cj.mu.Unlock()
			continue
		}
		assigned := map[string][]int32{}
		for t, ps := range cj.assigned {
			assigned[t] = append([]int32(nil), ps...)
		}
		run := &clusterRun{stop: make(chan struct{}), done: make(chan struct{})}
		cj.cur = run
		cj.mu.Unlock()

		cj.logf("runs over %s", formatAssignment(assigned))
		started := time.Now()
		ended, err := cj.run(ctx, run, assigned)
		switch {
		case err != nil:
			cj.logf("run failed after %v: %v", time.Since(started).Round(time.Millisecond), err)
		case ended:
			cj.logf("run ended after %v: its partitions are done", time.Since(started).Round(time.Millisecond))
		default:
			cj.logf("run stopped after %v: partitions handed off", time.Since(started).Round(time.Millisecond))
		}
		cj.mu.Lock()
		cj.cur = nil
		stopping := cj.stopping
		cj.mu.Unlock()
		close(run.done)
		if errors.Is(err, errFenced) {
			// A rebalance is under way or over: wait for the next
			// assignment; the aborted checkpoint's work is redone.
			continue
		}
		if txnAborted(err) && !stopping && aborted < maxAbortedRuns {
			aborted++
			// The broker aborted the checkpoint's transaction: it stayed
			// open longer than 'cluster.transaction-timeout' (a long
			// checkpoint on a busy machine). Nothing of it is visible;
			// the run starts again from the last checkpoint, if the
			// group still gives this member its partitions (a process
			// that took over the member's ID would have had the group
			// take them away: errFenced).
			cj.logf("the broker aborted the transaction of a checkpoint, which stayed open longer than 'cluster.transaction-timeout': the run starts again from the last checkpoint")
			select {
			case cj.wake <- struct{}{}:
			default:
			}
			continue
		}
		if err != nil {
			return err
		}
		aborted = 0
		if ended || stopping {
			return nil
		}
	}
}

// maxAbortedRuns bounds the runs in a row whose checkpoint the broker
// aborted: a machine too slow to checkpoint within the transaction
// timeout fails the job rather than start over forever.
const maxAbortedRuns = 10

// run runs the graph over one assignment. ended reports that every
// partition assigned ended (bounded input) rather than being stopped.
func (cj *clusterJob) run(ctx context.Context, run *clusterRun, assigned map[string][]int32) (ended bool, err error) {
	// The Kafka partition of each position key, filled in by the build.
	positions := map[string]topicPartition{}
	// How a source's position maps to the Kafka offset to commit, when
	// not position+1.
	resume := map[string]func(int64) int64{}
	backend, err := kafkalog.Open(ctx, kafkalog.Options{
		Bootstrap:          cj.brokers,
		Topic:              cmpOr(cj.cfg[config.StateKafkaTopic], "sluice-state-"+cj.group),
		TransactionalID:    cj.txnID,
		ManualPartitions:   func(topic string) bool { _, ok := cj.shuffle[topic]; return ok },
		TransactionTimeout: durationOption(cj.cfg, config.ClusterTransactionTimeout, 60*time.Second),
		ClientOpts:         cj.sec.Opts,
		Logf:               cj.e.logf,
		BeforeCommit: func(ctx context.Context, cl *kgo.Client, pos map[string]int64) error {
			return cj.commitOffsets(ctx, cl, positions, resume, pos)
		},
	})
	if err != nil {
		return false, cj.sec.Classify(err)
	}
	defer func() {
		if cerr := backend.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	txn := backend.Txn()
	env := cj.env
	env.ConnEnv.KafkaTxn, env.ConnEnv.KafkaTxnGate = txn, backend.TxnGate()
	env.Cluster = &physical.Cluster{
		Parts: func(table, stageID string, src connector.Source) ([]int, error) {
			tps, err := topicPartitions(table, src)
			if err != nil {
				return nil, err
			}
			for i, tp := range tps {
				positions[exec.PositionKey(stageID, i)] = tp
				if r, ok := src.(interface{ ResumeOffset(int64) int64 }); ok {
					resume[exec.PositionKey(stageID, i)] = r.ResumeOffset
				}
			}
			mine := map[topicPartition]bool{}
			for t, ps := range assigned {
				for _, p := range ps {
					mine[topicPartition{t, p}] = true
				}
			}
			parts := []int{}
			for i, tp := range tps {
				if mine[tp] {
					parts = append(parts, i)
				}
			}
			return parts, nil
		},
		Shuffle: func(id string, schema []types.Type, partitions, writers int, bounded bool) (connector.Source, []int, func(int, []int) (exec.Output, error), error) {
			topic := shuffleTopic(cj.group, id)
			src, err := cj.shuffleSource(id, schema, partitions, writers, bounded)
			if err != nil {
				return nil, nil, nil, err
			}
			parts := []int{}
			for _, p := range assigned[topic] {
				parts = append(parts, int(p))
			}
			for q := range partitions {
				positions[exec.PositionKey(id, q)] = topicPartition{topic, int32(q)}
			}
			writer := func(w int, keys []int) (exec.Output, error) {
				return kshuffle.NewWriter(kshuffle.Options{Topic: topic, Partitions: partitions, Schema: schema, Keys: keys,
					WriterID: w, Writers: writers, Client: txn, Transactional: true, Gate: backend.TxnGate()})
			}
			return src, parts, writer, nil
		},
	}
	g, err := physical.Build(env, cj.sinks...)
	if err != nil {
		return false, cj.e.positionTableError(err)
	}
	// The job's state is claimed as a single job's is (a group whose
	// state belongs to another job is refused); it is never dropped: a
	// member that dropped it would drop the others' ('state.start-fresh'
	// does not apply: a new 'cluster.group-id' starts afresh).
	err = g.Run(ctx, exec.RunOptions{Job: cj.env.Job, State: backend, Metrics: cj.job.Metrics, Now: cj.env.ConnEnv.Now,
		Stop: run.stop, CheckpointInterval: cj.interval})
	if err != nil {
		return false, err
	}
	select {
	case <-run.stop:
		return false, nil
	default:
		return true, nil
	}
}

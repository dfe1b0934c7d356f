// Package kafkatest starts in-process Kafka-protocol clusters for tests and
// reads and writes their topics.
//
// A cluster is a kfake cluster with one broker listening on a random port
// of 127.0.0.1 (over TLS with StartTLS); it lives in memory and is closed
// when the test ends. The
// helpers fail the test (t.Fatal) on any error and give up after
// Timeout, so that a broken cluster never hangs a test run.
package kafkatest

import (
	"context"
	"crypto/tls"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timeout bounds every helper's conversation with the cluster.
const Timeout = 30 * time.Second

// Start starts a one-broker cluster on a random loopback port, creates the
// topics with the given number of partitions each, and returns the
// bootstrap address ("127.0.0.1:port"). The cluster is closed at the end of
// the test.
func Start(t testing.TB, partitions int, topics ...string) (bootstrap string) {
	t.Helper()
	return start(t, nil, partitions, topics).ListenAddrs()[0]
}

// StartStoppable is Start that also returns a function stopping the
// cluster (as a broker that goes down would), for tests of what clients
// do then; it is safe to call more than once.
func StartStoppable(t testing.TB, partitions int, topics ...string) (bootstrap string, stop func()) {
	t.Helper()
	c := start(t, nil, partitions, topics)
	var once sync.Once
	stop = func() { once.Do(c.Close) }
	t.Cleanup(stop)
	return c.ListenAddrs()[0], stop
}

// TLS is the TLS of a cluster that StartTLS starts.
type TLS struct {
	// Server is the broker's configuration: its certificate and, for
	// mutual TLS, the CAs of the client certificates it requires
	// (tlstest's CA.ServerConfig makes one).
	Server *tls.Config
	// Client is the configuration this package's helpers (Client,
	// Produce, ReadAll, ...) dial the cluster with.
	Client *tls.Config
}

// helperTLS holds the Client configuration of each cluster StartTLS
// started, by bootstrap address, while it runs: the helpers take an
// address only.
var helperTLS sync.Map

// StartTLS is Start for a cluster whose broker speaks TLS only.
func StartTLS(t testing.TB, cfg TLS, partitions int, topics ...string) (bootstrap string) {
	t.Helper()
	if cfg.Server == nil || cfg.Client == nil {
		t.Fatal("kafkatest.StartTLS needs a server and a client configuration")
	}
	bootstrap = start(t, cfg.Server, partitions, topics).ListenAddrs()[0]
	helperTLS.Store(bootstrap, cfg.Client)
	t.Cleanup(func() { helperTLS.Delete(bootstrap) })
	return bootstrap
}

func start(t testing.TB, server *tls.Config, partitions int, topics []string) *kfake.Cluster {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(partitions)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(partitions), topics...))
	}
	if server != nil {
		opts = append(opts, kfake.TLS(server))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatalf("cannot start kafka cluster: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// ClosedAddr returns a loopback address where nothing listens: a port that
// was free when asked (a listener bound to it and closed), like a broker
// that is down.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("cannot find a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Client returns a client of the cluster at bootstrap, closed at the end
// of the test; of a cluster StartTLS started, over TLS.
func Client(t testing.TB, bootstrap string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(bootstrap)}
	if cfg, ok := helperTLS.Load(bootstrap); ok {
		base = append(base, kgo.DialTLSConfig(cfg.(*tls.Config)))
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatalf("cannot create kafka client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Admin returns an admin client of the cluster at bootstrap.
func Admin(t testing.TB, bootstrap string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(Client(t, bootstrap))
}

// CreateTopic creates a topic with the given number of partitions.
func CreateTopic(t testing.TB, bootstrap, topic string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	resp, err := Admin(t, bootstrap).CreateTopic(ctx, int32(partitions), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("cannot create topic %s: %v", topic, err)
	}
}

// Produce writes records to topic and waits for their acknowledgement.
// Records with an empty Topic go to topic; the others keep theirs. The
// client's default partitioner places them (by key hash, or sticky when the
// key is nil); use ProduceTo for explicit partitions.
func Produce(t testing.TB, bootstrap, topic string, records ...*kgo.Record) {
	t.Helper()
	produce(t, bootstrap, topic, nil, records)
}

// ProduceTo writes records to topic, each to the partition named by its
// Partition field, and waits for their acknowledgement.
func ProduceTo(t testing.TB, bootstrap, topic string, records ...*kgo.Record) {
	t.Helper()
	produce(t, bootstrap, topic, []kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner())}, records)
}

func produce(t testing.TB, bootstrap, topic string, opts []kgo.Opt, records []*kgo.Record) {
	t.Helper()
	cl := Client(t, bootstrap, opts...)
	defer cl.Close()
	for _, r := range records {
		if r.Topic == "" {
			r.Topic = topic
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("cannot produce to %s: %v", topic, err)
	}
}

// EndOffsets returns the end offset of every partition of topic: the last
// stable offset (what a read-committed consumer can read up to).
func EndOffsets(t testing.TB, bootstrap, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	lo, err := Admin(t, bootstrap).ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		t.Fatalf("cannot list offsets of %s: %v", topic, err)
	}
	out := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// ReadAll reads every committed record of topic that is there now, as a
// read-committed consumer sees them: records of open or aborted
// transactions are left out. Records are sorted by partition, then offset.
func ReadAll(t testing.TB, bootstrap, topic string) []*kgo.Record {
	t.Helper()
	ends := EndOffsets(t, bootstrap, topic)
	parts := map[int32]kgo.Offset{}
	left := 0
	for p, end := range ends {
		if end > 0 {
			parts[p] = kgo.NewOffset().AtStart()
			left++
		}
	}
	if left == 0 {
		return nil
	}
	cl := Client(t, bootstrap,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var out []*kgo.Record
	done := map[int32]bool{}
	for len(done) < left {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("cannot read %s: %d of %d partitions read to their end after %v", topic, len(done), left, Timeout)
		}
		fs.EachError(func(_ string, p int32, err error) {
			t.Fatalf("cannot read %s partition %d: %v", topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= ends[r.Partition] {
				done[r.Partition] = true
				return
			}
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
			if r.Offset+1 >= ends[r.Partition] {
				done[r.Partition] = true
			}
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Offset < out[j].Offset
	})
	return out
}

// CommitOffsets commits offsets of topic for group, as a consumer of the
// group would: partition → next offset to read.
func CommitOffsets(t testing.TB, bootstrap, group, topic string, offsets map[int32]int64) {
	t.Helper()
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	resp, err := Admin(t, bootstrap).CommitOffsets(ctx, group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("cannot commit offsets of group %s: %v", group, err)
	}
}

package sluice_test

import (
	"context"
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/internal/kafkatest"
	"github.com/sluicesql/sluice/internal/tlstest"
)

// mutualTLSBroker starts a broker that requires client certificates of
// its own CA, and returns its address with the properties (without
// their prefix) that reach it: a PEM trust store and a PEM key store
// file.
func mutualTLSBroker(t *testing.T, partitions int, topics ...string) (string, map[string]string) {
	t.Helper()
	ca, clients := tlstest.NewCA(t, "broker"), tlstest.NewCA(t, "clients")
	helper := &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{clients.Client("kafkatest").TLS}}
	bs := kafkatest.StartTLS(t, kafkatest.TLS{Server: ca.ServerConfig(clients), Client: helper}, partitions, topics...)
	c := clients.Client("sluice")
	var pem []byte
	for _, f := range []string{c.CertFile, c.KeyFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pem = append(pem, b...)
	}
	keystore := filepath.Join(t.TempDir(), "keystore.pem")
	if err := os.WriteFile(keystore, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	return bs, map[string]string{
		"security.protocol":       "SSL",
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": ca.CertFile,
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   keystore,
	}
}

// withPrefix writes props as SQL options or SET statements: "'p.k' = 'v'"
// joined by sep.
func withPrefix(prefix string, props map[string]string, sep string) string {
	var out []string
	for k, v := range props {
		out = append(out, "'"+prefix+k+"' = '"+v+"'")
	}
	return strings.Join(out, sep)
}

// tlsClusterJob is clusterJob with every Kafka client over TLS: the
// tables' through 'properties.*', the engine's (state, group, shuffle)
// through 'state.kafka.properties.*'.
func tlsClusterJob(bs string, tables, engine map[string]string) string {
	return strings.NewReplacer(
		"SET 'state.kafka.bootstrap.servers' = '$BOOTSTRAP';",
		"SET 'state.kafka.bootstrap.servers' = '"+bs+"';\nSET "+withPrefix("state.kafka.properties.", engine, ";\nSET ")+";",
		"'properties.bootstrap.servers' = '$BOOTSTRAP',",
		"'properties.bootstrap.servers' = '"+bs+"', "+withPrefix("properties.", tables, ", ")+",",
		"$BOUNDED", "'scan.bounded.mode' = 'latest-offset',",
	).Replace(clusterJob)
}

func execJob(t *testing.T, src string) (*sluice.Job, error) {
	t.Helper()
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	res, err := e.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		if r.Job != nil {
			j := r.Job
			t.Cleanup(func() { j.Cancel(); j.Wait() })
			return j, nil
		}
	}
	t.Fatal("no job started")
	return nil, nil
}

func waitJob(t *testing.T, j *sluice.Job) error {
	t.Helper()
	select {
	case <-j.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the job did not end")
	}
	return j.Wait()
}

// TestClusterMutualTLS runs the cluster job against a broker that
// requires client certificates: the group member, the shuffle topics
// and the state backend take 'state.kafka.properties.*', the tables
// 'properties.*'. A wrong CA for the engine's clients fails the job's
// start at once with a hint naming the property.
func TestClusterMutualTLS(t *testing.T) {
	bs, props := mutualTLSBroker(t, 4, "clicks", "counts")
	want := map[string]int{}
	kafkatest.ProduceTo(t, bs, "clicks", clicks(0, 1000, want)...)
	j, err := execJob(t, tlsClusterJob(bs, props, props))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	got, rows := counts(t, bs)
	if d := diffCounts(got, want); d != "" || rows != len(want) {
		t.Fatalf("%d rows for %d windows; differences:\n%s", rows, len(want), d)
	}

	wrong := map[string]string{}
	for k, v := range props {
		wrong[k] = v
	}
	wrong["ssl.truststore.location"] = tlstest.NewCA(t, "other").CertFile
	_, err = execJob(t, strings.Replace(tlsClusterJob(bs, props, wrong), "'counts-job'", "'counts-job-2'", 1))
	// The statement's error keeps the message only.
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority (the broker's certificate is signed by no CA of 'state.kafka.properties.ssl.truststore.location'") {
		t.Fatalf("wrong CA for the engine's clients: got %v, want a TLS error naming the property", err)
	}
}

// TestStateKafkaMutualTLS runs a job whose state is in Kafka, and whose
// exactly-once sink writes in the state backend's transaction, over
// mutual TLS; then plans it again and reads the manifest it saved there.
func TestStateKafkaMutualTLS(t *testing.T) {
	bs, props := mutualTLSBroker(t, 1, "in", "out")
	kafkatest.Produce(t, bs, "in", clicks(0, 10, nil)...)
	src := `
SET 'pipeline.name' = 'per-user';
SET 'state.backend' = 'kafka';
SET 'state.kafka.bootstrap.servers' = '` + bs + `';
SET ` + withPrefix("state.kafka.properties.", props, ";\nSET ") + `;
CREATE TABLE src (u STRING, ts TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'in', 'format' = 'json',
  'scan.bounded.mode' = 'latest-offset', 'properties.bootstrap.servers' = '` + bs + `', ` + withPrefix("properties.", props, ", ") + `);
CREATE TABLE dst (u STRING, n BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'out',
  'key.format' = 'json', 'value.format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'dst',
  'properties.bootstrap.servers' = '` + bs + `', ` + withPrefix("properties.", props, ", ") + `);
INSERT INTO dst SELECT u, COUNT(*) FROM src GROUP BY u;
`
	e, err := sluice.Open(sluice.Options{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	var j *sluice.Job
	for _, r := range res {
		if r.Job != nil {
			j = r.Job
		}
	}
	if err := waitJob(t, j); err != nil {
		t.Fatal(err)
	}
	if recs := kafkatest.ReadAll(t, bs, "out"); len(recs) < 10 {
		t.Fatalf("%d records in the output, want one per user at least", len(recs))
	}
	p, err := e.Plan("job.sql", []byte(src))
	if err != nil {
		t.Fatal(sluice.FormatError(err, []byte(src)))
	}
	if _, ok, err := e.SavedManifest(context.Background(), p.Name, p.Config); !ok || err != nil {
		t.Fatalf("the manifest saved in Kafka: found %v, %v", ok, err)
	}
}

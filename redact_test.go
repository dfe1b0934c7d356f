package sluice_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
	"github.com/sluicesql/sluice/connector"
)

// leakyConnector is a connector, as a third party might write one, whose
// errors quote its secret options.
type leakyConnector struct{}

func (leakyConnector) Name() string { return "leaky" }

func (leakyConnector) CreateSource(t connector.Table, env connector.Env) (connector.Source, error) {
	if t.Options["fail"] == "create" {
		return nil, fmt.Errorf("cannot log in with 'access-token' %s", t.Options["access-token"])
	}
	return leakySource{t.Options["access-token"]}, nil
}

type leakySource struct{ token string }

func (leakySource) Partitions() int { return 1 }
func (leakySource) Bounded() bool   { return true }
func (s leakySource) Open(context.Context, int) (connector.Reader, error) {
	return nil, fmt.Errorf("the server refused token %s", s.token)
}

// TestErrorsMaskSecrets: neither an error nor the source line printed
// under it quotes a password or a token, whether the connector masked it
// (jdbc) or not (a connector registered from Go).
func TestErrorsMaskSecrets(t *testing.T) {
	const secret = "hunter2-secret"
	run := func(src string) string {
		t.Helper()
		e, err := sluice.Open(sluice.Options{Stdout: &strings.Builder{}})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if err := e.RegisterConnector(leakyConnector{}); err != nil {
			t.Fatal(err)
		}
		err = e.Run(context.Background(), "job.sql", []byte(src))
		if err == nil {
			t.Fatalf("no error:\n%s", src)
		}
		return sluice.FormatError(err, []byte(src))
	}
	for _, src := range []string{
		// The connector's message masks the URL; the line shown under it too.
		`CREATE TABLE d (id BIGINT, name STRING) WITH ('connector' = 'jdbc', 'table-name' = 'd',
  'url' = 'jdbc:postgresql://h/db?password=` + secret + `&foo=bar');
CREATE TABLE s (id BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
SELECT s.id, d.name FROM s JOIN d FOR SYSTEM_TIME AS OF s.pt ON s.id = d.id;`,
		// A connector that quotes its secret when it is created...
		`CREATE TABLE s (id BIGINT) WITH ('connector' = 'leaky', 'access-token' = '` + secret + `', 'fail' = 'create');
SELECT * FROM s;`,
		// ... and when the job runs.
		`CREATE TABLE s (id BIGINT) WITH ('connector' = 'leaky', 'access-token' = '` + secret + `');
SELECT * FROM s;`,
	} {
		if got := run(src); strings.Contains(got, secret) || !strings.Contains(got, "xxxxx") {
			t.Errorf("the error quotes a secret (or masks nothing):\n%s", got)
		}
	}
}

// TestSetListingMasksSecrets: SET without a key lists the options, a
// secret one masked.
func TestSetListingMasksSecrets(t *testing.T) {
	e, err := sluice.Open(sluice.Options{Stdout: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "s.sql", []byte(`SET 'state.kafka.sasl.password' = 'hunter2-secret'; SET 'parallelism.default' = '2'; SET;`))
	if err != nil {
		t.Fatal(err)
	}
	if got := res[2].Message; strings.Contains(got, "hunter2") || !strings.Contains(got, "'parallelism.default' = '2'") {
		t.Errorf("SET lists:\n%s", got)
	}
}

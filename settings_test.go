package sluice_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// TestSetUnknownKey: SET of a key Sluice does not read is accepted, as
// Flink passes unknown keys through, but the engine's log warns of it,
// with its position and the known key it is nearest to: a typo in
// 'execution.checkpointing.interval' would otherwise change nothing
// without a word. Known keys, and keys set through Options.Config, are
// checked the same way.
func TestSetUnknownKey(t *testing.T) {
	var log bytes.Buffer
	e, err := sluice.Open(sluice.Options{Log: &log, Config: map[string]string{"parallelism.defualt": "2", "pipeline.name": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Exec(context.Background(), "job.sql", []byte(`SET 'execution.checkpointing.intervall' = '10 s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'sql-client.execution.result-mode' = 'tableau';
SET 'table.exec.sink.not-nul-enforcer' = 'DROP';
SET;`))
	if err != nil {
		t.Fatal(err)
	}
	got := log.String()
	for _, want := range []string{
		"warning: Sluice does not read the option 'parallelism.defualt' (sluice -D or Options.Config): it has no effect (did you mean 'parallelism.default'?)",
		"job.sql:1:1: warning: Sluice does not read the option 'execution.checkpointing.intervall': it has no effect (did you mean 'execution.checkpointing.interval'?)",
		"job.sql:3:1: warning: Sluice does not read the option 'sql-client.execution.result-mode': it has no effect\n",
		"job.sql:4:1: warning: Sluice does not read the option 'table.exec.sink.not-nul-enforcer': it has no effect (did you mean 'table.exec.sink.not-null-enforcer'?)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "warning:"); n != 4 {
		t.Errorf("%d warnings, want 4 (none for known keys):\n%s", n, got)
	}
	// The keys are kept all the same.
	if list := res[4].Message; !strings.Contains(list, "'execution.checkpointing.intervall' = '10 s'") {
		t.Errorf("SET; lacks the unknown key:\n%s", list)
	}
}

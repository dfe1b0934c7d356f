package sluice_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluicesql/sluice"
)

// TestLegacyTableOptions: Flink's legacy table options (the TableFactory
// descriptors' 'connector.type', 'connector.path', 'format.type',
// 'format.field-delimiter', ...), as the Nexmark suite declares q13's side
// input, are read as today's options, each with a deprecation notice on
// the log that names the option it stands for.
func TestLegacyTableOptions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "side_input.txt", "1|one\n2|two\n")
	var log bytes.Buffer
	out, err := runSQLOpts(t, sluice.Options{Log: &log}, dir, `
CREATE TABLE side_input (
  key BIGINT,
  `+"`value`"+` VARCHAR
) WITH (
  'connector.type' = 'filesystem',
  'connector.path' = 'file://$DIR/side_input.txt',
  'format.type' = 'csv',
  'format.field-delimiter' = '|',
  'format.property-version' = '1'
);
SELECT key, `+"`value`"+` FROM side_input;
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(sortedLines(out), "\n"), "key, value\n+I[1, one]\n+I[2, two]"; got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
	for _, want := range []string{
		"test.sql:6:3: warning: option 'connector.type' is deprecated (a legacy Flink table option): it is read as 'connector'",
		"test.sql:7:3: warning: option 'connector.path' is deprecated (a legacy Flink table option): it is read as 'path'",
		"test.sql:8:3: warning: option 'format.type' is deprecated (a legacy Flink table option): it is read as 'format'",
		"test.sql:9:3: warning: option 'format.field-delimiter' is deprecated (a legacy Flink table option): it is read as 'csv.field-delimiter'",
		"test.sql:10:3: warning: option 'format.property-version' is deprecated (a legacy Flink table option): it has no effect",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	}
}

// TestLegacyTableOptionsConflict: a legacy option given beside the one it
// stands for is refused, at the legacy option.
func TestLegacyTableOptionsConflict(t *testing.T) {
	_, err := runSQL(t, nil, t.TempDir(), `CREATE TABLE t (a INT) WITH (
  'connector' = 'filesystem', 'connector.type' = 'filesystem', 'path' = 'x', 'format' = 'csv');`)
	want := "test.sql:2:31: option 'connector.type' is the legacy form of 'connector', which is given too: keep one"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

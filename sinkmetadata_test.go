package sluice_test

import (
	"strings"
	"testing"
)

// Flink writes a sink table's persisted METADATA columns through its
// connector and refuses a key the connector does not write, listing the
// ones it does. No Sluice connector writes metadata: an INSERT into such
// a table is refused, not run with the column dropped. A VIRTUAL metadata
// column is read-only and is no part of what a sink writes, as in Flink.
func TestSinkMetadataColumnRefused(t *testing.T) {
	dir := t.TempDir()
	writeHintInputs(t, dir)
	_, err := runSQL(t, nil, dir, `
CREATE TABLE bids (item STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
CREATE TABLE outm (item STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH ('connector' = 'filesystem', 'path' = '$DIR/outm.jsonl', 'format' = 'json');
INSERT INTO outm SELECT item FROM bids;`)
	want := "test.sql:4:13: table 'outm' cannot be written: its column 'ts' is METADATA 'timestamp', which connector 'filesystem' does not write"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v\nwant prefix %s", err, want)
	}
	if _, err := runSQL(t, nil, dir, `
CREATE TABLE bids (item STRING) WITH ('connector' = 'filesystem', 'path' = '$DIR/bids.jsonl', 'format' = 'json');
CREATE TABLE outv (item STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL) WITH ('connector' = 'blackhole');
INSERT INTO outv SELECT item FROM bids;`); err != nil {
		t.Errorf("a VIRTUAL metadata column: %v", err)
	}
}

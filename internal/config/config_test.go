package config

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"execution.checkpointing.intervall", CheckpointingInterval},
		{"execution.checkpoint.interval", CheckpointingInterval},
		{"paralelism.default", ParallelismDefault},
		{"table.exec.sink.not-nul-enforcer", SinkNotNullEnforcer},
		{"table.local-timezone", LocalTimeZone},
		{"sql-client.execution.result-mode", ""},
		{"execution.runtime-mode", ""},
	} {
		if got := Nearest(tc.in); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ key, value, err string }{
		{ParallelismDefault, "0", "parallelism.default must be an integer between 1 and"},
		{SinkTypeLengthEnforcer, "trim_pad", ""},
		{SinkTypeLengthEnforcer, "pad", "must be 'IGNORE', 'TRIM_PAD' or 'ERROR'"},
		{LocalTimeZone, "Mars/Olympus", "unknown time zone"},
		{PipelineSharedSource, "FALSE", ""},
		{PipelineSharedSource, "sometimes", "pipeline.shared-source must be 'true' or 'false'"},
		{"no.such.key", "anything", ""},
	} {
		err := Check(tc.key, tc.value)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Check(%s, %s) = %v, want %q", tc.key, tc.value, err, tc.err)
		}
	}
	if Unknown(ParallelismDefault, "") != "" {
		t.Errorf("a known key warns")
	}
	for _, k := range []string{"state.kafka.properties.security.protocol", "state.kafka.properties.ssl.truststore.location", "state.kafka.properties.sasl.mechanism"} {
		if msg := Unknown(k, ""); msg != "" {
			t.Errorf("%s: %s", k, msg)
		}
	}
	if msg := Unknown("state.kafka.properties.client.id", ""); !strings.Contains(msg, "the engine reads security.protocol, sasl.* and ssl.* only") {
		t.Errorf("state.kafka.properties.client.id: %q", msg)
	}
}

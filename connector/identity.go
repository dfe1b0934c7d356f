package connector

import (
	"sort"
	"strings"
)

// Identified is a Source (or Sink) that says what it reads (or writes):
// the connector and the options that choose the data, such as a file's
// absolute path or a topic and its cluster, and nothing that only changes
// how it is read. A job's checkpointed positions and state belong to the
// identities of its sources and sinks: a job restarted over the state of
// a source with another identity is refused (see SourceIdentity).
type Identified interface {
	Identity() string
}

// SourceIdentity returns the identity of table t read through s: s's own
// when it is Identified, else the connector's name with every option of
// t except those that only change how rows are read or decoded (the
// format and its options, the error policy, startup modes, rates and
// limits, client properties other than the servers).
func SourceIdentity(t Table, s any) string {
	if id, ok := s.(Identified); ok {
		return id.Identity()
	}
	return DefaultIdentity(t)
}

// DefaultIdentity is the connector's name and the options of t that are
// not known to change only how the data is read, sorted.
func DefaultIdentity(t Table) string {
	format := t.Options["format"]
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		if k != "connector" && !howOption(k, format) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(t.Options["connector"])
	for _, k := range keys {
		b.WriteString(" ")
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(t.Options[k])
	}
	return b.String()
}

// howOption reports whether option k changes how a table is read rather
// than what: such options may change between runs of a job.
func howOption(k, format string) bool {
	switch k {
	case "format", "key.format", "value.format", "rows-per-second", "number-of-rows", "scan.parallelism",
		"properties.group.id", "sink.parallelism", "source.idle-timeout", DeadLetterPathOption:
		return true
	}
	for _, p := range []string{"scan.", "sink.", "lookup.", "key.", "value."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	if format != "" && strings.HasPrefix(k, format+".") {
		return true
	}
	return strings.HasPrefix(k, "properties.") && k != "properties.bootstrap.servers"
}

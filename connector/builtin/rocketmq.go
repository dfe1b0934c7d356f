//go:build !norocketmq

package builtin

import (
	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/connector/rocketmq"
)

// optional returns the connectors a build may leave out: rocketmq, whose
// client (gRPC, OpenCensus, zap, a validator) adds about 4.6 MB to the
// binary and 4 MB of memory its packages allocate at start; the tag
// norocketmq leaves it out.
func optional() []connector.Factory { return []connector.Factory{rocketmq.New()} }

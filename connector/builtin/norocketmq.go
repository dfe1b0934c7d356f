//go:build norocketmq

package builtin

import "github.com/sluicesql/sluice/connector"

// optional: a build with the tag norocketmq has no rocketmq connector.
func optional() []connector.Factory { return nil }

//go:build norocketmq

package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// newDevRocketMQ: a build with the tag norocketmq has neither the
// rocketmq connector nor its fake.
func newDevRocketMQ(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:    "rocketmq",
		Short:  "Not in this build (built with the tag norocketmq)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("this sluice is built without RocketMQ (the build tag norocketmq)")
		},
	}
}

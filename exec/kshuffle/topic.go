package kshuffle

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnsureTopic creates topic with the given number of partitions unless it
// exists, and fails when it exists with another number of partitions.
// replication 0 means the broker's default. Several processes may call it
// at once.
func EnsureTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int, replication int16) error {
	if replication == 0 {
		replication = -1
	}
	adm := kadm.NewClient(cl)
	_, err := adm.CreateTopic(ctx, int32(partitions), replication, nil, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("cannot create shuffle topic %s: %w", topic, err)
	}
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("cannot describe shuffle topic %s: %w", topic, err)
	}
	d, ok := td[topic]
	if !ok {
		return fmt.Errorf("cannot describe shuffle topic %s: not in the metadata", topic)
	}
	if d.Err != nil {
		return fmt.Errorf("cannot describe shuffle topic %s: %w", topic, d.Err)
	}
	if len(d.Partitions) != partitions {
		return fmt.Errorf("shuffle topic %s has %d partitions, want %d", topic, len(d.Partitions), partitions)
	}
	return nil
}

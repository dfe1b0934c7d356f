//go:build !linux

package lsm

import "github.com/cockroachdb/pebble/v2/vfs"

// fallocate is not available here: the caller writes the bytes.
func fallocate(vfs.File, int64) (bool, error) { return false, nil }

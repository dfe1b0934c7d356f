//go:build !linux

package store

func adviseHuge([]byte) {}

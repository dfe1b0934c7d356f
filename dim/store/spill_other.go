//go:build !linux

package store

import (
	"errors"
	"os"
)

const spillSupported = false

func mapFile(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}

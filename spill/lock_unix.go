//go:build unix

package spill

import (
	"errors"
	"os"
	"syscall"
)

const canLock = true

// flockExclusive takes an exclusive flock on f without waiting.
func flockExclusive(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

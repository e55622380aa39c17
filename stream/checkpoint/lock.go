package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LockFile is the file in a checkpoint directory that the job using the
// directory holds locked (flock), and that names it: its pid, host and
// start time.
const LockFile = ".lock"

// ErrLocked is wrapped by the error of OpenDir on a directory that another
// job holds.
var ErrLocked = errors.New("checkpoint: the directory is in use by another job")

// dirLock is a held lock on a checkpoint directory.
type dirLock struct{ f *os.File }

// lockDir takes the lock of the checkpoint directory path, or says who
// holds it.
func lockDir(path string) (*dirLock, error) {
	name := filepath.Join(path, LockFile)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flockExclusive(f); err != nil {
		holder, _ := os.ReadFile(name)
		f.Close()
		if errors.Is(err, errWouldBlock) {
			h := strings.TrimSpace(string(holder))
			if h == "" {
				h = "a job that did not say who it is"
			}
			return nil, fmt.Errorf("%w: %s (two jobs must not share a checkpoint directory)", ErrLocked, h)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	host, _ := os.Hostname()
	who := fmt.Sprintf("pid %d on host %s since %s\n", os.Getpid(), host, time.Now().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(who), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return &dirLock{f: f}, nil
}

// release lets another job take the directory. The file stays: removing it
// would let two jobs lock two different files of the same name.
func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}

package sink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Committable is a part file closed at a checkpoint and waiting for it to
// complete (Flink's FileSinkCommittable): Commit renames Pending to Final.
// It encodes with MarshalBinary, for the committer's state.
type Committable struct {
	Checkpoint int64  // the checkpoint whose PrepareCommit returned it
	Pending    string // the hidden, complete file
	Final      string // its committed name
}

// committableVersion starts an encoded Committable.
const committableVersion = 1

// MarshalBinary encodes c.
func (c Committable) MarshalBinary() ([]byte, error) {
	b := []byte{committableVersion}
	b = binary.AppendVarint(b, c.Checkpoint)
	b = binary.AppendUvarint(b, uint64(len(c.Pending)))
	b = append(b, c.Pending...)
	b = binary.AppendUvarint(b, uint64(len(c.Final)))
	return append(b, c.Final...), nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (c *Committable) UnmarshalBinary(b []byte) error {
	bad := errors.New("stream/sink: malformed committable")
	if len(b) == 0 || b[0] != committableVersion {
		return bad
	}
	b = b[1:]
	cp, n := binary.Varint(b)
	if n <= 0 {
		return bad
	}
	b = b[n:]
	var strs [2]string
	for i := range strs {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return bad
		}
		strs[i] = string(b[n : n+int(l)])
		b = b[n+int(l):]
	}
	if len(b) != 0 {
		return bad
	}
	*c = Committable{Checkpoint: cp, Pending: strs[0], Final: strs[1]}
	return nil
}

// Commit publishes committables (Flink's FileCommitter): each pending file is
// renamed to its final name, and then the directories are synced. It is
// idempotent: a committable whose pending file is gone while its final file
// exists was committed before and is skipped, so a restored job may commit
// again what an earlier attempt committed. A pending file that is missing
// with no final file is an error. Commit may run in any goroutine, for the
// committables of any subtasks.
func Commit(cs []Committable) error {
	dirs := map[string]bool{}
	for _, c := range cs {
		err := os.Rename(c.Pending, c.Final)
		if err != nil && errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(c.Final); serr == nil {
				continue // committed before
			}
			return errorf("commit", c.Final, fmt.Errorf("pending file %s is missing: %w", c.Pending, err))
		}
		if err != nil {
			return errorf("commit", c.Final, err)
		}
		dirs[filepath.Dir(c.Final)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return errorf("sync", dir, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errorf("sync", dir, err)
	}
	return nil
}

package sink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Committable is a part file closed at a checkpoint and waiting for it to
// complete (Flink's FileSinkCommittable): Commit renames Pending to Final.
// It encodes with MarshalBinary, for the committer's state, as the two
// file names without their directory: a restore joins them to the sink's
// directory (FileSink.Confine), so that a checkpoint holds no path of its
// own and resumes from any working directory.
type Committable struct {
	Checkpoint int64  // the checkpoint whose PrepareCommit returned it
	Pending    string // the hidden, complete file
	Final      string // its committed name
}

// committableVersion starts an encoded Committable: 2 holds file names;
// 1, still read, held the paths.
const committableVersion = 2

// MarshalBinary encodes c, the names of its files without their directory.
func (c Committable) MarshalBinary() ([]byte, error) {
	pending, final := filepath.Base(c.Pending), filepath.Base(c.Final)
	b := []byte{committableVersion}
	b = binary.AppendVarint(b, c.Checkpoint)
	b = binary.AppendUvarint(b, uint64(len(pending)))
	b = append(b, pending...)
	b = binary.AppendUvarint(b, uint64(len(final)))
	return append(b, final...), nil
}

// UnmarshalBinary decodes what MarshalBinary encoded: the names of the
// files (version 2) or their paths (version 1), as stored. They are not
// to be used before FileSink.Confine checked them.
func (c *Committable) UnmarshalBinary(b []byte) error {
	bad := errors.New("stream/sink: malformed committable")
	if len(b) == 0 || b[0] < 1 || b[0] > committableVersion {
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
			return &refusedError{errorf("commit", c.Final, fmt.Errorf("pending file %s is missing: %w", c.Pending, err))}
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

// ErrNotOwnPart is wrapped by the error of a restored committable that does
// not name one of the sink's own part files in its directory.
var ErrNotOwnPart = errors.New("stream/sink: a restored committable names a file that is not a part of this sink")

// refusedError is a restored committable refused; no restart cures it.
type refusedError struct{ err error }

func (e *refusedError) Error() string       { return e.err.Error() }
func (e *refusedError) Unwrap() error       { return e.err }
func (e *refusedError) Unrecoverable() bool { return true }

// Confine checks committables a restore read and returns them with their
// files in the sink's directory. Each must name a committed part of this
// sink (prefix-<subtask>-<counter>suffix, as OutputFileConfig says) and its
// pending file (.<name>.pending), as names, or, as older checkpoints
// stored them, as paths in the sink's directory. Anything else, a path
// elsewhere, "..", another file, is refused with an error naming the entry
// and wrapping ErrNotOwnPart: a crafted checkpoint must not rename files
// outside the output.
func (s *FileSink[T]) Confine(cs []Committable) ([]Committable, error) {
	out := make([]Committable, len(cs))
	for i, c := range cs {
		var err error
		if out[i], err = s.confine(c, fmt.Sprintf("entry %d ", i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// confine is Confine of one committable, named by what in its error.
func (s *FileSink[T]) confine(c Committable, what string) (Committable, error) {
	pending, final, err := s.cfg.ownPart(s.dir, c)
	if err != nil {
		return Committable{}, &refusedError{fmt.Errorf("%w: %s: %s(checkpoint %d, pending %q, final %q): %s",
			ErrNotOwnPart, s.dir, what, c.Checkpoint, c.Pending, c.Final, err)}
	}
	return Committable{Checkpoint: c.Checkpoint, Pending: filepath.Join(s.dir, pending), Final: filepath.Join(s.dir, final)}, nil
}

// ownPart returns the names of the files of committable c when they are a
// part of the sink in dir, or says why not.
func (c *config) ownPart(dir string, cm Committable) (pending, final string, err error) {
	final, err = inDir(dir, cm.Final)
	if err != nil {
		return "", "", err
	}
	if pending, err = inDir(dir, cm.Pending); err != nil {
		return "", "", err
	}
	if _, _, k := c.parsePart(final); k != committed {
		return "", "", fmt.Errorf("%q is not a part file name of the sink", final)
	}
	rest, ok := strings.CutPrefix(pending, "."+final+pendingMark)
	if _, end, hasNonce := cutNonce(rest); !ok || rest != "" && (!hasNonce || end != "") {
		return "", "", fmt.Errorf("%q is not the pending file of %q", pending, final)
	}
	return pending, final, nil
}

// inDir returns the file name of p: p itself when it is a plain name,
// else the last element of a path whose directory is dir.
func inDir(dir, p string) (string, error) {
	name := filepath.Base(p)
	if p == name {
		if name == "." || name == ".." || name == "" || name == string(filepath.Separator) {
			return "", fmt.Errorf("%q is not a file name", p)
		}
		return name, nil
	}
	if filepath.Clean(filepath.Dir(p)) == filepath.Clean(dir) {
		return name, nil
	}
	a, aerr := filepath.Abs(filepath.Dir(p))
	b, berr := filepath.Abs(dir)
	if aerr != nil || berr != nil || a != b {
		return "", fmt.Errorf("%q is outside the output directory", p)
	}
	return name, nil
}

// CheckCommittable says whether c, as a snapshot stores it, names a part
// file and its pending file in one directory, with no "..", as every
// committable the sink writes does, whatever its names' prefix and suffix;
// weir savepoint inspect flags the others. A restore checks more
// (Confine): the names must be the sink's own, in its directory.
func CheckCommittable(c Committable) error {
	final := filepath.Base(c.Final)
	if final == "." || final == ".." || strings.HasPrefix(final, ".") {
		return fmt.Errorf("%w: final %q is not a part file name", ErrNotOwnPart, c.Final)
	}
	rest, ok := strings.CutPrefix(filepath.Base(c.Pending), "."+final+pendingMark)
	if _, end, hasNonce := cutNonce(rest); filepath.Dir(c.Pending) != filepath.Dir(c.Final) || !ok || rest != "" && (!hasNonce || end != "") {
		return fmt.Errorf("%w: pending %q is not the pending file of %q", ErrNotOwnPart, c.Pending, c.Final)
	}
	for _, e := range strings.Split(filepath.ToSlash(c.Final), "/") {
		if e == ".." {
			return fmt.Errorf("%w: final %q climbs out of its directory", ErrNotOwnPart, c.Final)
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

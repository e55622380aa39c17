package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteSavepoint writes savepoint s into a new directory of dir,
// savepoint-<6 hex>-<12 hex> as Flink names them (Flink's first part is
// the job id's prefix; a weir job has none, so both parts are random), and
// returns its path. The savepoint is self-contained: the shared files its
// subtasks name are copied into its own shared directory, read through
// shared. It is built in a hidden directory and renamed into place once
// complete, so a savepoint directory is complete or absent.
func WriteSavepoint(dir string, s *Snapshot, shared func(name string) (io.ReadCloser, error)) (string, error) {
	if err := validateSnapshot(s); err != nil {
		return "", err
	}
	return writeSavepoint(osFS{}, dir, s, shared)
}

// WriteSavepoint writes savepoint s into dir as the package's
// WriteSavepoint does, with the Dir's storage: dir is a directory, or for
// a Dir on a bucket a URL in the same bucket ("s3://bucket/savepoints")
// too.
func (d *Dir) WriteSavepoint(dir string, s *Snapshot, shared func(name string) (io.ReadCloser, error)) (string, error) {
	if err := validateSnapshot(s); err != nil {
		return "", err
	}
	if d.bucket == nil || !strings.Contains(dir, "://") {
		return writeSavepoint(osFS{}, dir, s, shared)
	}
	root := strings.TrimSuffix(d.bucket.String(), "/") + "/"
	prefix, ok := strings.CutPrefix(dir, root)
	if !ok && dir+"/" != root {
		return "", fmt.Errorf("checkpoint: write savepoint %d: %s is not in %s, the bucket of the checkpoints", s.ID, dir, d.bucket)
	}
	path, err := writeSavepoint(d.fs, key(prefix), s, shared)
	if err != nil {
		return "", err
	}
	return d.where(path), nil
}

func writeSavepoint(fsys fileSystem, dir string, s *Snapshot, shared func(name string) (io.ReadCloser, error)) (string, error) {
	if s.Kind != Savepoint {
		return "", fmt.Errorf("checkpoint: write savepoint: snapshot %d is a %s", s.ID, s.Kind)
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return "", fmt.Errorf("checkpoint: write savepoint %d: %w", s.ID, err)
	}
	var name string
	for attempt := 0; ; attempt++ {
		name = "savepoint-" + randomHex(3) + "-" + randomHex(6)
		_, err := fsys.Stat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if attempt == 9 {
			return "", fmt.Errorf("checkpoint: write savepoint %d: no free directory name in %s", s.ID, dir)
		}
	}
	final := filepath.Join(dir, name)
	if objectStore(fsys) {
		// Built under its final name: it is complete once its _metadata,
		// put last, is there. A failed build is removed.
		if err := buildSavepoint(fsys, final, s, shared); err != nil {
			_ = fsys.RemoveAll(final)
			return "", fmt.Errorf("checkpoint: write savepoint %d: %w", s.ID, err)
		}
		return final, nil
	}
	tmp := filepath.Join(dir, "."+name+inProgressSuffix)
	if _, err := RemoveStaleSavepoints(dir); err != nil {
		return "", fmt.Errorf("checkpoint: write savepoint %d: %w", s.ID, err)
	}
	owner, err := ownDir(dir, name, tmp)
	if err != nil {
		return "", fmt.Errorf("checkpoint: write savepoint %d: %w", s.ID, err)
	}
	defer owner.release()
	if err := buildSavepoint(fsys, tmp, s, shared); err != nil {
		_ = fsys.RemoveAll(tmp)
		return "", fmt.Errorf("checkpoint: write savepoint %d: %w", s.ID, err)
	}
	if err := fsys.Rename(tmp, final); err != nil {
		_ = fsys.RemoveAll(tmp)
		return "", fmt.Errorf("checkpoint: write savepoint %d: %w", s.ID, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return "", fmt.Errorf("checkpoint: write savepoint %d: %w", s.ID, err)
	}
	return final, nil
}

// buildSavepoint writes the savepoint's files into tmp: the shared files
// first, then the snapshot.
func buildSavepoint(fsys fileSystem, tmp string, s *Snapshot, shared func(name string) (io.ReadCloser, error)) error {
	own := filepath.Join(tmp, sharedDir)
	if err := fsys.MkdirAll(own); err != nil {
		return err
	}
	copied := map[string]fileRef{}
	for _, op := range s.Operators {
		for _, st := range op.Subtasks {
			for _, name := range st.Shared {
				if _, ok := copied[name]; ok {
					continue
				}
				if shared == nil {
					return fmt.Errorf("shared file %s: no source of shared files", name)
				}
				ref, err := copyShared(fsys, filepath.Join(own, name), name, shared)
				if err != nil {
					return fmt.Errorf("shared file %s: %w", name, err)
				}
				copied[name] = ref
			}
		}
	}
	if err := fsys.SyncDir(own); err != nil {
		return err
	}
	_, err := writeSnapshotDir(fsys, tmp, s, true, func(name string) (fileRef, error) { return copied[name], nil })
	return err
}

// copyShared copies shared file name to path, fsynced.
func copyShared(fsys fileSystem, path, name string, shared func(name string) (io.ReadCloser, error)) (fileRef, error) {
	src, err := shared(name)
	if err != nil {
		return fileRef{}, err
	}
	defer src.Close()
	dst, err := fsys.Create(path)
	if err != nil {
		return fileRef{}, err
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(io.MultiWriter(dst, h), src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fileRef{}, err
	}
	return fileRef{Name: name, Size: n, CRC: h.Sum32()}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail
	return hex.EncodeToString(b)
}

// inProgressSuffix ends the hidden name of a savepoint being written.
const inProgressSuffix = ".inprogress"

// ownDir creates the in-progress directory tmp of savepoint name in dir,
// locked (flock on the directory) while this process writes it: made
// under another name, locked, then renamed, so that RemoveStaleSavepoints
// never sees it unlocked.
func ownDir(dir, name, tmp string) (*dirLock, error) {
	making := filepath.Join(dir, "."+name+".creating")
	if err := os.Mkdir(making, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Open(making)
	if err == nil {
		if err = flockExclusive(f); err != nil {
			f.Close()
		}
	}
	if err == nil {
		if err = os.Rename(making, tmp); err != nil {
			f.Close()
		}
	}
	if err != nil {
		_ = os.Remove(making)
		return nil, err
	}
	return &dirLock{f: f}, nil
}

// RemoveStaleSavepoints removes from dir the hidden directories of
// savepoints being written (.savepoint-*.inprogress) whose writer is gone:
// a process killed while writing one leaves it, and nothing else would
// remove it. A directory a live process writes is locked and stays. It
// returns the paths removed.
func RemoveStaleSavepoints(dir string) ([]string, error) {
	if !canLock {
		return nil, nil // no writer can be told alive
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var removed []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || !strings.HasPrefix(n, ".savepoint-") || !strings.HasSuffix(n, inProgressSuffix) {
			continue
		}
		p := filepath.Join(dir, n)
		f, err := os.Open(p)
		if err != nil {
			continue // gone meanwhile
		}
		if flockExclusive(f) != nil {
			f.Close()
			continue // its writer runs
		}
		err = os.RemoveAll(p)
		f.Close()
		if err != nil {
			return removed, fmt.Errorf("checkpoint: remove the stale %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

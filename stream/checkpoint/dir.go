package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DirOptions configure a Dir.
type DirOptions struct {
	// Retained is the number of complete checkpoints kept, Flink's
	// state.checkpoints.num-retained (default 1).
	Retained int
	// Savepoints is the directory Store writes savepoints into (see
	// WriteSavepoint); empty refuses to store a savepoint.
	Savepoints string
	// OnSkip, if set, is called for each damaged checkpoint OpenDir and
	// Latest pass over, with the checkpoint's directory and the reason.
	OnSkip func(path string, err error)
	// Follower opens the storage of checkpoints another process stores
	// (the parts of a spread job but part 0): without the lock, removing
	// nothing. Latest reads what the owner stored, shared files are
	// written and read as the owner's, and Store is refused.
	Follower bool

	fs fileSystem // the file system; tests inject failures through it
}

// Dir is a Storage in a directory, as Flink's FsCheckpointStorageAccess and
// DefaultCompletedCheckpointStore:
//
//	path/chk-<id>/       a checkpoint: op<i>-<subtask>.state and .inflight
//	                     files, then _metadata naming them, written last
//	path/shared/         files of incremental snapshots, kept while a
//	                     retained checkpoint names them
//
// A checkpoint is complete once its _metadata is in place: the state
// files are fsynced, the metadata is written to _metadata.tmp, fsynced,
// renamed and the directory fsynced. OpenDir removes what a crash left
// (checkpoint directories without _metadata, temporary files, shared files
// no checkpoint names) and never a complete checkpoint. A Dir is safe for
// concurrent use. One Dir at a time owns path: OpenDir locks path/.lock
// (flock) until Close, and refuses a directory another job holds, naming
// its pid, host and start time. A follower (DirOptions.Follower: another
// process of the same job) takes no lock and removes nothing.
type Dir struct {
	mu       sync.Mutex
	path     string
	opts     DirOptions
	fs       fileSystem
	retained []int64 // complete checkpoints kept, oldest first
	reg      *sharedRegistry
	lastID   int64 // the newest id stored, savepoints included
	skipped  []error
	lock     *dirLock
	bucket   Bucket // the object store of a Dir opened by OpenBucket
	// sharedAll and sharedAdded are the bytes of the shared files the
	// last checkpoint stored names: all of them, and those no retained
	// checkpoint named before it.
	sharedAll, sharedAdded int64
}

const checkpointPrefix = "chk-"

// OpenDir opens the checkpoint storage in path, creating it if needed,
// locks it (an error wrapping ErrLocked names the job holding it), and
// removes what an interrupted Store left there.
func OpenDir(path string, opts DirOptions) (*Dir, error) {
	if opts.Retained < 1 {
		opts.Retained = 1
	}
	d := &Dir{path: path, opts: opts, fs: opts.fs, reg: newSharedRegistry()}
	if d.fs == nil {
		d.fs = osFS{}
	}
	if err := d.fs.MkdirAll(filepath.Join(path, sharedDir)); err != nil {
		return nil, fmt.Errorf("checkpoint: open %s: %w", path, err)
	}
	if opts.Follower {
		return d, nil
	}
	lock, err := lockDir(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: open %s: %w", path, err)
	}
	d.lock = lock
	if err := d.recover(); err != nil {
		lock.release()
		return nil, fmt.Errorf("checkpoint: open %s: %w", path, err)
	}
	return d, nil
}

// OpenBucket opens the checkpoint storage under prefix in bucket b, as
// OpenDir opens a directory: the same layout, metadata and contracts, with
// keys for paths. A Put is atomic, so each file is written under its final
// key: the state files of a checkpoint under names no other attempt uses
// (op<i>-<j>-<8 hex>.state), its _metadata last. A checkpoint without
// _metadata is incomplete and OpenBucket removes it, with shared files no
// checkpoint names. A bucket has no lock: one job at a time must use a
// prefix (the job's fingerprint in each snapshot still refuses another
// job's checkpoints on restore). Savepoints go under DirOptions.Savepoints,
// a prefix in the same bucket. Paths returned and reported name the bucket
// ("s3://bucket/prefix/chk-7").
func OpenBucket(b Bucket, prefix string, opts DirOptions) (*Dir, error) {
	if opts.Retained < 1 {
		opts.Retained = 1
	}
	d := &Dir{path: key(prefix), opts: opts, fs: bucketFS{b: b}, reg: newSharedRegistry(), bucket: b}
	if opts.Follower {
		return d, nil
	}
	if err := d.recover(); err != nil {
		return nil, fmt.Errorf("checkpoint: open %s: %w", d.where(d.path), err)
	}
	return d, nil
}

// where returns path p as a user knows it: the path, or the bucket's URL
// and the key.
func (d *Dir) where(p string) string {
	if d.bucket == nil {
		return p
	}
	return strings.TrimSuffix(d.bucket.String(), "/") + "/" + key(p)
}

// named returns err with the path of a *CorruptError as a user knows it.
func (d *Dir) named(err error) error {
	var ce *CorruptError
	if d.bucket == nil || !errors.As(err, &ce) {
		return err
	}
	return &CorruptError{Path: d.where(ce.Path), Reason: ce.Reason}
}

// Close releases the directory's lock, so that another job may open it.
// The Dir must not be used after.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lock == nil {
		return nil
	}
	if err := d.lock.release(); err != nil {
		return fmt.Errorf("checkpoint: close %s: %w", d.path, err)
	}
	return nil
}

// Path returns the storage's directory, or its bucket's URL and prefix.
func (d *Dir) Path() string { return d.where(d.path) }

// recover rebuilds the retained checkpoints and the shared registry from
// the directory, newest complete checkpoints first, and removes leftovers.
func (d *Dir) recover() error {
	ids, err := d.checkpointIDs()
	if err != nil {
		return err
	}
	var valid []int64
	metas := map[int64]*metadata{}
	for _, id := range slices.Backward(ids) {
		dir := d.chkDir(id)
		if !d.hasMetadata(dir) {
			if err := d.fs.RemoveAll(dir); err != nil {
				return err
			}
			continue
		}
		m, _, err := checkSnapshot(d.fs, dir, false)
		if m != nil {
			metas[id] = m
		}
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				return err
			}
			d.skip(dir, err)
			continue
		}
		valid = append(valid, id)
		d.lastID = max(d.lastID, id)
	}
	// Keep the newest Retained valid checkpoints and the damaged ones newer
	// than the oldest of them; remove the rest, oldest-first order aside.
	keepFrom := int64(0)
	if len(valid) > 0 {
		keepFrom = valid[min(len(valid), d.opts.Retained)-1]
	}
	for _, id := range ids {
		if id < keepFrom {
			if err := d.removeCheckpoint(id); err != nil {
				return err
			}
			delete(metas, id)
			continue
		}
		if m := metas[id]; m != nil {
			d.reg.register(id, m)
		}
		if slices.Contains(valid, id) {
			d.retained = append(d.retained, id)
		}
	}
	return d.removeUnnamedShared()
}

// removeUnnamedShared removes the files of the shared directory that no
// checkpoint names and the temporary ones.
func (d *Dir) removeUnnamedShared() error {
	dir := filepath.Join(d.path, sharedDir)
	entries, err := d.fs.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, ok := d.reg.lookup(e.Name()); ok && validName(e.Name()) {
			continue
		}
		if err := d.fs.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// checkpointIDs lists the ids of the chk-<id> directories, ascending.
func (d *Dir) checkpointIDs() ([]int64, error) {
	entries, err := d.fs.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), checkpointPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		id, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || id < 0 || strconv.FormatInt(id, 10) != rest {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (d *Dir) chkDir(id int64) string {
	return filepath.Join(d.path, checkpointPrefix+strconv.FormatInt(id, 10))
}

func (d *Dir) hasMetadata(dir string) bool {
	_, err := d.fs.Stat(filepath.Join(dir, MetadataFile))
	return !errors.Is(err, fs.ErrNotExist)
}

func (d *Dir) skip(path string, err error) {
	err = d.named(err)
	d.skipped = append(d.skipped, err)
	if d.opts.OnSkip != nil {
		d.opts.OnSkip(d.where(path), err)
	}
}

// removeCheckpoint removes checkpoint id's directory, its metadata first so
// that a crash halfway leaves an incomplete directory, not a torn one.
func (d *Dir) removeCheckpoint(id int64) error {
	dir := d.chkDir(id)
	if err := d.fs.Remove(filepath.Join(dir, MetadataFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return d.fs.RemoveAll(dir)
}

// Store writes checkpoint s into chk-<id> and, once it is complete,
// discards the checkpoints beyond the newest Retained and the shared files
// only they named. A savepoint goes to DirOptions.Savepoints instead, is
// never discarded and is not a checkpoint Latest returns (Flink's
// CheckpointCoordinator adds only checkpoints to its
// CompletedCheckpointStore). The ids stored must increase. The shared files s names
// must be in the shared directory (SharedPath, CreateShared).
func (d *Dir) Store(s *Snapshot) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opts.Follower {
		return "", fmt.Errorf("checkpoint: store %s %d: %s is opened as a follower: its owner stores", s.Kind, s.ID, d.where(d.path))
	}
	if err := validateSnapshot(s); err != nil {
		return "", err
	}
	if s.ID <= d.lastID {
		return "", fmt.Errorf("checkpoint: store %s %d after %d", s.Kind, s.ID, d.lastID)
	}
	if s.Kind == Savepoint {
		if d.opts.Savepoints == "" {
			return "", fmt.Errorf("checkpoint: store savepoint %d: no savepoint directory configured", s.ID)
		}
		path, err := writeSavepoint(d.fs, d.opts.Savepoints, s, d.openShared)
		if err != nil {
			return "", err
		}
		d.lastID = s.ID
		return d.where(path), nil
	}
	if err := d.removeLeftovers(s); err != nil {
		return "", fmt.Errorf("checkpoint: store checkpoint %d: %w", s.ID, err)
	}
	dir := d.chkDir(s.ID)
	sharedBase := filepath.Join(d.path, sharedDir)
	newShared := false
	seen := map[string]bool{}
	var all, added int64
	ref := func(name string) (fileRef, error) {
		f, ok := d.reg.lookup(name)
		if !ok {
			newShared = true
			var err error
			if f, err = fileCRC(d.fs, filepath.Join(sharedBase, name), name); err != nil {
				return f, fmt.Errorf("shared file: %w", err)
			}
		}
		if !seen[name] {
			seen[name] = true
			all += f.Size
			if !ok {
				added += f.Size
			}
		}
		return f, nil
	}
	m, err := writeSnapshotDir(d.fs, dir, s, false, ref)
	if err == nil && newShared {
		err = d.fs.SyncDir(sharedBase)
	}
	if err != nil {
		_ = d.fs.RemoveAll(dir)
		return "", fmt.Errorf("checkpoint: store checkpoint %d: %w", s.ID, err)
	}
	d.reg.register(s.ID, m)
	dir = d.where(dir)
	d.sharedAll, d.sharedAdded = all, added
	d.retained = append(d.retained, s.ID)
	d.lastID = s.ID
	if err := d.subsume(); err != nil {
		return dir, fmt.Errorf("checkpoint: store checkpoint %d: discard older checkpoints: %w", s.ID, err)
	}
	return dir, nil
}

// SharedSize returns the bytes of the shared files that the checkpoint
// stored last names: all of them (with its inline state, Flink's full
// checkpoint data size) and those it added, that no retained checkpoint
// named before (with its inline state, Flink's checkpointed data size of
// an incremental checkpoint).
func (d *Dir) SharedSize() (all, added int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sharedAll, d.sharedAdded
}

// removeLeftovers removes the checkpoint directories that are not retained
// and either incomplete or not older than s: what a failed Store left, and
// damaged checkpoints a restore passed over. Shared files only they named
// go too, unless s names them.
func (d *Dir) removeLeftovers(s *Snapshot) error {
	ids, err := d.checkpointIDs()
	if err != nil {
		return err
	}
	for _, c := range ids {
		if slices.Contains(d.retained, c) || c < s.ID && d.hasMetadata(d.chkDir(c)) {
			continue
		}
		if err := d.removeCheckpoint(c); err != nil {
			return err
		}
		unused := slices.DeleteFunc(d.reg.unregister(c), func(name string) bool { return names(s, name) })
		if err := d.removeShared(unused); err != nil {
			return err
		}
	}
	return nil
}

// names reports whether a subtask of s names shared file name.
func names(s *Snapshot, name string) bool {
	for _, op := range s.Operators {
		for _, st := range op.Subtasks {
			if slices.Contains(st.Shared, name) {
				return true
			}
		}
	}
	return false
}

// subsume discards the oldest checkpoints beyond Retained, each directory
// before the shared files only it named.
func (d *Dir) subsume() error {
	var errs []error
	for len(d.retained) > d.opts.Retained {
		id := d.retained[0]
		d.retained = d.retained[1:]
		if err := d.removeCheckpoint(id); err != nil {
			errs = append(errs, err)
			continue // its shared files stay named by its metadata
		}
		errs = append(errs, d.removeShared(d.reg.unregister(id)))
	}
	// Damaged checkpoints older than the oldest retained one go too.
	ids, err := d.checkpointIDs()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, c := range ids {
		if c < d.retained[0] {
			if err := d.removeCheckpoint(c); err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, d.removeShared(d.reg.unregister(c)))
		}
	}
	return errors.Join(errs...)
}

func (d *Dir) removeShared(names []string) error {
	var errs []error
	for _, name := range names {
		if err := d.fs.Remove(d.SharedPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Latest returns the newest checkpoint whose metadata and files are intact,
// read in, and its directory. Damaged checkpoints on the way are skipped
// and the reasons kept (Skipped, DirOptions.OnSkip). With no checkpoint it
// returns nil; when checkpoints exist but none is intact, nil and an error
// joining the reasons.
func (d *Dir) Latest() (*Snapshot, string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.skipped = nil
	ids, err := d.checkpointIDs()
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint: %w", err)
	}
	for _, id := range slices.Backward(ids) {
		dir := d.chkDir(id)
		if d.opts.Follower && !d.hasMetadata(dir) {
			continue // the owner is writing it
		}
		_, s, err := checkSnapshot(d.fs, dir, true)
		if err == nil {
			return s, d.where(dir), nil
		}
		if !errors.Is(err, ErrCorrupt) {
			return nil, "", err
		}
		d.skip(dir, err)
	}
	if len(d.skipped) > 0 {
		return nil, "", fmt.Errorf("checkpoint: %s: none of %d checkpoints is intact: %w", d.where(d.path), len(d.skipped), errors.Join(d.skipped...))
	}
	return nil, "", nil
}

// Skipped returns why the damaged checkpoints passed over by the last
// Latest (or by OpenDir, before the first) were skipped, newest first. Each
// error is a *CorruptError naming the damaged file.
func (d *Dir) Skipped() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.skipped)
}

// Retained returns the ids of the complete checkpoints kept, oldest first.
func (d *Dir) Retained() []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.retained)
}

// SharedPath returns the path of the shared file name. A runtime that
// writes it there itself fsyncs it before the checkpoint naming it is
// stored. Names are plain file names, not starting with a dot.
func (d *Dir) SharedPath(name string) string {
	return filepath.Join(d.path, sharedDir, name)
}

// CreateShared returns a writer of the shared file name: written under a
// hidden temporary name, fsynced and renamed into place by Close.
func (d *Dir) CreateShared(name string) (io.WriteCloser, error) {
	if !validName(name) {
		return nil, fmt.Errorf("checkpoint: shared file name %q: want a plain name not starting with a dot", name)
	}
	path := d.SharedPath(name)
	tmp := filepath.Join(d.path, sharedDir, "."+name+".tmp")
	if objectStore(d.fs) {
		tmp = path // put whole on Close
	}
	f, err := d.fs.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: shared file %s: %w", d.where(path), err)
	}
	return &sharedWriter{fsys: d.fs, f: f, tmp: tmp, path: path}, nil
}

// OpenShared opens the shared file name for reading.
func (d *Dir) OpenShared(name string) (io.ReadCloser, error) {
	return d.openShared(name)
}

func (d *Dir) openShared(name string) (io.ReadCloser, error) {
	if !validName(name) {
		return nil, fmt.Errorf("checkpoint: shared file name %q", name)
	}
	f, err := d.fs.Open(d.SharedPath(name))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return f, nil
}

// validateSnapshot checks what the metadata of s must hold.
func validateSnapshot(s *Snapshot) error {
	if s == nil {
		return errors.New("checkpoint: store of a nil snapshot")
	}
	if s.ID < 0 || s.Kind > Savepoint {
		return fmt.Errorf("checkpoint: store of a %s with id %d", s.Kind, s.ID)
	}
	for _, op := range s.Operators {
		if op.Parallelism != len(op.Subtasks) || op.Parallelism < 0 || op.MaxParallelism < 0 {
			return fmt.Errorf("checkpoint: %s %d: operator %q of parallelism %d has %d subtasks",
				s.Kind, s.ID, op.ID, op.Parallelism, len(op.Subtasks))
		}
		for j, st := range op.Subtasks {
			for _, name := range st.Shared {
				if !validName(name) {
					return fmt.Errorf("checkpoint: %s %d: operator %q subtask %d: shared file name %q", s.Kind, s.ID, op.ID, j, name)
				}
			}
		}
	}
	return nil
}

package checkpoint

import (
	"fmt"
	"path/filepath"
	"slices"
)

// sharedRegistry knows, per file of the shared directory, the stored
// checkpoints that name it, as Flink's SharedStateRegistry: a file is
// deleted once no checkpoint kept names it, and never while one does.
// Flink records per file the newest checkpoint naming it and, when
// checkpoints below the lowest retained one are subsumed, discards the
// files last named below it; with checkpoints subsumed oldest first, as
// here, that is the same as counting the checkpoints that name a file.
type sharedRegistry struct {
	files map[string]*sharedEntry
}

type sharedEntry struct {
	ref   fileRef
	users map[int64]struct{}
}

func newSharedRegistry() *sharedRegistry {
	return &sharedRegistry{files: map[string]*sharedEntry{}}
}

// register records that checkpoint id names the shared files of m.
func (r *sharedRegistry) register(id int64, m *metadata) {
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, f := range st.Shared {
				e := r.files[f.Name]
				if e == nil {
					e = &sharedEntry{ref: f, users: map[int64]struct{}{}}
					r.files[f.Name] = e
				}
				e.users[id] = struct{}{}
			}
		}
	}
}

// unregister drops checkpoint id's references and returns the files no
// checkpoint names any more, in name order.
func (r *sharedRegistry) unregister(id int64) []string {
	var unused []string
	for name, e := range r.files {
		if _, ok := e.users[id]; !ok {
			continue
		}
		delete(e.users, id)
		if len(e.users) == 0 {
			delete(r.files, name)
			unused = append(unused, name)
		}
	}
	slices.Sort(unused)
	return unused
}

// lookup returns the reference of a registered file.
func (r *sharedRegistry) lookup(name string) (fileRef, bool) {
	e, ok := r.files[name]
	if !ok {
		return fileRef{}, false
	}
	return e.ref, true
}

// users returns the checkpoints naming a file, in id order.
func (r *sharedRegistry) users(name string) []int64 {
	e, ok := r.files[name]
	if !ok {
		return nil
	}
	ids := make([]int64, 0, len(e.users))
	for id := range e.users {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// sharedWriter writes a shared file under a hidden temporary name and
// renames it into place on Close, once durable.
type sharedWriter struct {
	fsys      fileSystem
	f         writeFile
	tmp, path string
	err       error
}

func (w *sharedWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.err = fmt.Errorf("checkpoint: %s: %w", w.tmp, err)
	}
	return n, w.err
}

// Close makes the file durable under its name, or removes it after an
// error.
func (w *sharedWriter) Close() error {
	if w.f == nil {
		return w.err
	}
	f := w.f
	w.f = nil
	err := w.err
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && w.tmp != w.path {
		err = w.fsys.Rename(w.tmp, w.path)
	}
	if err == nil {
		err = w.fsys.SyncDir(filepath.Dir(w.path))
	}
	if err != nil {
		_ = w.fsys.Remove(w.tmp)
		if w.err == nil {
			w.err = fmt.Errorf("checkpoint: shared file %s: %w", w.path, err)
		}
		return w.err
	}
	w.err = fmt.Errorf("checkpoint: shared file %s: closed", w.path)
	return nil
}

package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
)

// A snapshot's directory holds a file per subtask state and per subtask
// in-flight state, named op<operator index>-<subtask>.state and
// .inflight, and the metadata file naming them, written last.

// writeSnapshotDir writes s into the new directory dir: the state files,
// fsynced, then the metadata through a temporary file renamed once durable.
// shared returns the reference of a shared file the snapshot names. It
// returns the metadata written.
func writeSnapshotDir(fsys fileSystem, dir string, s *Snapshot, ownShared bool, shared func(name string) (fileRef, error)) (*metadata, error) {
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, err
	}
	if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	// In an object store, a file is never replaced: the files of this
	// attempt get names no other attempt at the same id uses.
	suffix := ""
	if objectStore(fsys) {
		suffix = "-" + randomHex(4)
	}
	m := &metadata{ID: s.ID, Kind: s.Kind, Timestamp: s.Timestamp, Finished: s.Finished, OwnShared: ownShared, Fingerprint: s.Fingerprint}
	for i, op := range s.Operators {
		om := operatorMeta{ID: op.ID, Name: op.Name, Kind: op.Kind, Parallelism: op.Parallelism,
			MaxParallelism: op.MaxParallelism, Coordinator: op.Coordinator, Finished: op.Finished}
		for j, st := range op.Subtasks {
			sm := subtaskMeta{Watermark: st.Watermark}
			var err error
			if sm.State, err = writeStateFile(fsys, dir, fmt.Sprintf("op%d-%d%s.state", i, j, suffix), st.State); err != nil {
				return nil, err
			}
			if sm.InFlight, err = writeStateFile(fsys, dir, fmt.Sprintf("op%d-%d%s.inflight", i, j, suffix), st.InFlight); err != nil {
				return nil, err
			}
			for _, name := range st.Shared {
				ref, err := shared(name)
				if err != nil {
					return nil, err
				}
				sm.Shared = append(sm.Shared, ref)
			}
			om.Subtasks = append(om.Subtasks, sm)
		}
		m.Operators = append(m.Operators, om)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return nil, err
	}
	if objectStore(fsys) {
		// A Put is atomic: the metadata appears whole, last.
		return m, writeDurable(fsys, filepath.Join(dir, MetadataFile), encodeMetadata(m))
	}
	tmp := filepath.Join(dir, metadataTemp)
	if err := writeDurable(fsys, tmp, encodeMetadata(m)); err != nil {
		return nil, err
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, MetadataFile)); err != nil {
		return nil, err
	}
	return m, fsys.SyncDir(dir)
}

// writeStateFile writes b (nil: no file) as file name of dir.
func writeStateFile(fsys fileSystem, dir, name string, b []byte) (*fileRef, error) {
	if b == nil {
		return nil, nil
	}
	if err := writeDurable(fsys, filepath.Join(dir, name), b); err != nil {
		return nil, err
	}
	return &fileRef{Name: name, Size: int64(len(b)), CRC: crc32.Checksum(b, castagnoli)}, nil
}

// checkSnapshot validates the snapshot in dir against its metadata: every
// file present, of its length and checksum. With load it returns the
// Snapshot too, state read in. Damage is a *CorruptError naming the file.
func checkSnapshot(fsys fileSystem, dir string, load bool) (*metadata, *Snapshot, error) {
	mpath := filepath.Join(dir, MetadataFile)
	b, err := readMetadata(fsys, mpath)
	if err != nil {
		return nil, nil, err
	}
	m, err := decodeMetadata(mpath, b)
	if err != nil {
		return nil, nil, err
	}
	s := &Snapshot{ID: m.ID, Kind: m.Kind, Timestamp: m.Timestamp, Finished: m.Finished, Fingerprint: m.Fingerprint}
	shared := sharedDirOf(dir, m)
	for _, om := range m.Operators {
		op := OperatorState{ID: om.ID, Name: om.Name, Kind: om.Kind, Parallelism: om.Parallelism,
			MaxParallelism: om.MaxParallelism, Coordinator: om.Coordinator, Finished: om.Finished}
		for _, sm := range om.Subtasks {
			st := SubtaskState{Watermark: sm.Watermark}
			if sm.State != nil {
				if st.State, err = checkFile(fsys, filepath.Join(dir, sm.State.Name), *sm.State, load); err != nil {
					return m, nil, err
				}
			}
			if sm.InFlight != nil {
				if st.InFlight, err = checkFile(fsys, filepath.Join(dir, sm.InFlight.Name), *sm.InFlight, load); err != nil {
					return m, nil, err
				}
			}
			for _, f := range sm.Shared {
				if _, err := checkFile(fsys, filepath.Join(shared, f.Name), f, false); err != nil {
					return m, nil, err
				}
				st.Shared = append(st.Shared, f.Name)
			}
			if load {
				op.Subtasks = append(op.Subtasks, st)
			}
		}
		s.Operators = append(s.Operators, op)
	}
	return m, s, nil
}

// readMetadata reads a metadata file, refusing one beyond maxMetadata.
func readMetadata(fsys fileSystem, path string) ([]byte, error) {
	info, err := fsys.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, corrupt(path, "missing: the snapshot is not complete")
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if info.Size() > maxMetadata {
		return nil, corrupt(path, "metadata of %d bytes", info.Size())
	}
	b, err := fsys.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return b, nil
}

// sharedDirOf is where the shared files of the snapshot in dir are.
func sharedDirOf(dir string, m *metadata) string {
	if m.OwnShared {
		return filepath.Join(dir, sharedDir)
	}
	return filepath.Join(filepath.Dir(dir), sharedDir)
}

// checkFile checks the file at path against ref, returning its bytes with
// keep.
func checkFile(fsys fileSystem, path string, ref fileRef, keep bool) ([]byte, error) {
	f, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, corrupt(path, "missing")
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	var buf bytes.Buffer
	w := io.Writer(h)
	if keep {
		buf.Grow(int(min(ref.Size, 1<<30)))
		w = io.MultiWriter(h, &buf)
	}
	// Read one byte past the length the metadata says, to tell a longer
	// file.
	n, err := io.Copy(w, io.LimitReader(f, ref.Size+1))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	switch {
	case n < ref.Size:
		return nil, corrupt(path, "truncated: %d bytes of %d", n, ref.Size)
	case n > ref.Size:
		return nil, corrupt(path, "longer than the %d bytes the metadata says", ref.Size)
	case h.Sum32() != ref.CRC:
		return nil, corrupt(path, "checksum mismatch")
	}
	if !keep {
		return nil, nil
	}
	if b := buf.Bytes(); b != nil {
		return b, nil
	}
	return []byte{}, nil
}

// fileCRC reads the file at path and returns its reference as name.
func fileCRC(fsys fileSystem, path, name string) (fileRef, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return fileRef{}, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return fileRef{}, err
	}
	return fileRef{Name: name, Size: n, CRC: h.Sum32()}, nil
}

package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Info is a snapshot as Inspect finds it on disk: the Snapshot and where
// each of its parts is.
type Info struct {
	// Dir is the snapshot's directory, Metadata its metadata file.
	Dir, Metadata string
	// SharedDir is the directory of the shared files the snapshot names:
	// the storage's for a checkpoint, the snapshot's own for a savepoint.
	SharedDir string
	Snapshot  *Snapshot
	// Files are, per operator and subtask (as in Snapshot.Operators), the
	// files holding the subtask's state.
	Files [][]SubtaskFiles
}

// SubtaskFiles are the files of one subtask's state.
type SubtaskFiles struct {
	// State and InFlight are file names in Info.Dir; empty for none.
	State, InFlight string
	// Shared are the shared files the subtask names, in Info.SharedDir.
	Shared []SharedFile
}

// SharedFile is a shared file a subtask names.
type SharedFile struct {
	Name string
	Size int64
}

// Load reads the checkpoint or savepoint at path, its directory or its
// metadata file, validating it as Dir.Latest does: a damaged snapshot is a
// *CorruptError naming the file.
func Load(path string) (*Snapshot, error) {
	info, err := Inspect(path)
	if err != nil {
		return nil, err
	}
	return info.Snapshot, nil
}

// LoadBucket reads the checkpoint or savepoint at path in bucket b (its
// key prefix, or the key of its metadata) as Load does.
func LoadBucket(b Bucket, path string) (*Snapshot, error) {
	info, err := InspectBucket(b, path)
	if err != nil {
		return nil, err
	}
	return info.Snapshot, nil
}

// InspectBucket reads and validates the snapshot at path in bucket b like
// LoadBucket, and says where its parts are, as URLs of the bucket.
func InspectBucket(b Bucket, path string) (*Info, error) {
	url := func(p string) string { return strings.TrimSuffix(b.String(), "/") + "/" + key(p) }
	info, err := inspect(bucketFS{b: b}, key(path))
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			err = &CorruptError{Path: url(ce.Path), Reason: ce.Reason}
		}
		return nil, err
	}
	info.Dir, info.Metadata, info.SharedDir = url(info.Dir), url(info.Metadata), url(info.SharedDir)
	return info, nil
}

// Inspect reads and validates the snapshot at path like Load, and says
// where its parts are.
func Inspect(path string) (*Info, error) {
	return inspect(osFS{}, path)
}

func inspect(fsys fileSystem, path string) (*Info, error) {
	st, err := fsys.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if objectStore(fsys) {
			return nil, fmt.Errorf("checkpoint: %s: no such key or prefix in %s", path, fsys.(bucketFS).b)
		}
		return nil, fmt.Errorf("checkpoint: %s: no such file or directory", path)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	dir := path
	if !st.IsDir() {
		if filepath.Base(path) != MetadataFile {
			return nil, fmt.Errorf("checkpoint: %s: not a snapshot: give its directory or its %s file", path, MetadataFile)
		}
		dir = filepath.Dir(path)
	}
	m, s, err := checkSnapshot(fsys, dir, true)
	if err != nil {
		return nil, err
	}
	info := &Info{Dir: dir, Metadata: filepath.Join(dir, MetadataFile), SharedDir: sharedDirOf(dir, m), Snapshot: s}
	for _, om := range m.Operators {
		var files []SubtaskFiles
		for _, sm := range om.Subtasks {
			var f SubtaskFiles
			if sm.State != nil {
				f.State = sm.State.Name
			}
			if sm.InFlight != nil {
				f.InFlight = sm.InFlight.Name
			}
			for _, r := range sm.Shared {
				f.Shared = append(f.Shared, SharedFile{Name: r.Name, Size: r.Size})
			}
			files = append(files, f)
		}
		info.Files = append(info.Files, files)
	}
	return info, nil
}

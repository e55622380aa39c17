package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// bucketFS is the file system of a Dir on a Bucket: a path is a key, a
// directory the keys under it. A file is written to memory (past
// spoolLimit, to a temporary file) and put on Close, which makes it
// durable and visible at once; there is nothing to sync and nothing is
// renamed.
type bucketFS struct {
	b Bucket
}

// spoolLimit is the size past which a file being written moves from
// memory to a temporary file.
const spoolLimit = 8 << 20

// objectStore reports whether fsys puts whole files atomically, so that a
// file is written under its final name and never renamed.
func objectStore(fsys fileSystem) bool {
	_, ok := fsys.(bucketFS)
	return ok
}

func key(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

func (bucketFS) MkdirAll(string) error { return nil }

func (bucketFS) SyncDir(string) error { return nil }

func (f bucketFS) Create(p string) (writeFile, error) {
	return &objectWriter{b: f.b, key: key(p)}, nil
}

func (f bucketFS) Open(p string) (io.ReadCloser, error) {
	return f.b.Get(context.Background(), key(p))
}

func (f bucketFS) ReadFile(p string) ([]byte, error) {
	r, err := f.Open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// dirPrefix is the key prefix of the objects under directory p.
func dirPrefix(p string) string {
	if k := key(p); k != "" {
		return k + "/"
	}
	return ""
}

func (f bucketFS) ReadDir(p string) ([]fs.DirEntry, error) {
	prefix := dirPrefix(p)
	keys, err := f.b.List(context.Background(), prefix)
	if err != nil {
		return nil, err
	}
	var ents []fs.DirEntry
	for _, k := range keys {
		name, _, isDir := strings.Cut(strings.TrimPrefix(k, prefix), "/")
		if name == "" {
			continue
		}
		if n := len(ents); n > 0 && ents[n-1].Name() == name {
			continue // keys are sorted: a directory's keys follow each other
		}
		ents = append(ents, objectInfo{name: name, dir: isDir})
	}
	return ents, nil
}

func (f bucketFS) Stat(p string) (fs.FileInfo, error) {
	size, err := f.b.Size(context.Background(), key(p))
	if err == nil {
		return objectInfo{name: path.Base(key(p)), size: size}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	keys, lerr := f.b.List(context.Background(), dirPrefix(p))
	if lerr != nil {
		return nil, lerr
	}
	if len(keys) == 0 {
		return nil, err
	}
	return objectInfo{name: path.Base(key(p)), dir: true}, nil
}

func (bucketFS) Rename(string, string) error { return errRename }

func (f bucketFS) RemoveAll(p string) error {
	ctx := context.Background()
	keys, err := f.b.List(ctx, dirPrefix(p))
	if err != nil {
		return err
	}
	var errs []error
	for _, k := range keys {
		errs = append(errs, f.b.Delete(ctx, k))
	}
	if k := key(p); k != "" {
		errs = append(errs, f.b.Delete(ctx, k))
	}
	return errors.Join(errs...)
}

func (f bucketFS) Remove(p string) error { return f.b.Delete(context.Background(), key(p)) }

// objectInfo is a key, or a directory of keys, as a file.
type objectInfo struct {
	name string
	size int64
	dir  bool
}

func (o objectInfo) Name() string { return o.name }
func (o objectInfo) Size() int64  { return o.size }
func (o objectInfo) Mode() fs.FileMode {
	if o.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (o objectInfo) ModTime() time.Time         { return time.Time{} }
func (o objectInfo) IsDir() bool                { return o.dir }
func (o objectInfo) Sys() any                   { return nil }
func (o objectInfo) Type() fs.FileMode          { return o.Mode().Type() }
func (o objectInfo) Info() (fs.FileInfo, error) { return o, nil }

// objectWriter collects an object's bytes and puts it on Close.
type objectWriter struct {
	b     Bucket
	key   string
	buf   bytes.Buffer
	spool *os.File // the bytes past spoolLimit moved here
	n     int64
	err   error
}

func (w *objectWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.spool == nil && w.buf.Len()+len(p) > spoolLimit {
		f, err := os.CreateTemp("", "weir-object-*")
		if err == nil {
			_, err = f.Write(w.buf.Bytes())
		}
		if err != nil {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
			w.err = fmt.Errorf("checkpoint: spool %s: %w", w.key, err)
			return 0, w.err
		}
		w.spool = f
		w.buf = bytes.Buffer{}
	}
	var n int
	var err error
	if w.spool != nil {
		n, err = w.spool.Write(p)
	} else {
		n, err = w.buf.Write(p)
	}
	w.n += int64(n)
	if err != nil {
		w.err = fmt.Errorf("checkpoint: spool %s: %w", w.key, err)
	}
	return n, w.err
}

// Sync does nothing: Close puts the object, durable once Put returns.
func (w *objectWriter) Sync() error { return w.err }

// Close puts the object and drops the spool.
func (w *objectWriter) Close() error {
	if w.spool != nil {
		defer func() {
			w.spool.Close()
			os.Remove(w.spool.Name())
			w.spool = nil
		}()
	}
	if w.err != nil {
		return w.err
	}
	var r io.Reader = &w.buf
	if w.spool != nil {
		if _, err := w.spool.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r = w.spool
	}
	w.err = errors.New("checkpoint: object writer closed")
	return w.b.Put(context.Background(), w.key, r, w.n)
}

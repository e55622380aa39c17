package spill

import (
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
)

// MemFS is an in-memory FS for tests. It is safe for concurrent use.
type MemFS struct {
	mu    sync.Mutex
	files map[string]*memData
}

var _ FS = (*MemFS)(nil)

type memData struct{ b []byte }

// NewMemFS returns an empty MemFS.
func NewMemFS() *MemFS { return &MemFS{files: map[string]*memData{}} }

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; ok {
		return nil, fmt.Errorf("spill: memfs create %s: %w", name, fs.ErrExist)
	}
	d := &memData{}
	m.files[name] = d
	return &memFile{fs: m, name: name, data: d, write: true}, nil
}

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.files[name]
	if !ok {
		return nil, fmt.Errorf("spill: memfs open %s: %w", name, fs.ErrNotExist)
	}
	return &memFile{fs: m, name: name, data: d}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; !ok {
		return fmt.Errorf("spill: memfs remove %s: %w", name, fs.ErrNotExist)
	}
	delete(m.files, name)
	return nil
}

// Files returns the names of the files that exist, sorted.
func (m *MemFS) Files() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.files))
	for n := range m.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Contents returns a copy of a file's bytes.
func (m *MemFS) Contents(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.files[name]
	if !ok {
		return nil, fmt.Errorf("spill: memfs read %s: %w", name, fs.ErrNotExist)
	}
	return slices.Clone(d.b), nil
}

// SetContents replaces a file's bytes (creating it if needed), e.g. to corrupt it.
func (m *MemFS) SetContents(name string, b []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.files[name]
	if d == nil {
		d = &memData{}
		m.files[name] = d
	}
	d.b = slices.Clone(b)
	return nil
}

type memFile struct {
	fs     *MemFS
	name   string
	data   *memData
	off    int
	write  bool
	closed bool
}

func (f *memFile) Read(p []byte) (int, error) {
	if f.closed || f.write {
		return 0, fmt.Errorf("spill: memfs read %s: %w", f.name, fs.ErrClosed)
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.off >= len(f.data.b) {
		return 0, io.EOF
	}
	n := copy(p, f.data.b[f.off:])
	f.off += n
	return n, nil
}

// Seek moves a file opened for reading; only io.SeekStart is supported.
func (f *memFile) Seek(off int64, whence int) (int64, error) {
	if f.closed || f.write || whence != io.SeekStart || off < 0 {
		return 0, fmt.Errorf("spill: memfs seek %s to %d (whence %d): %w", f.name, off, whence, fs.ErrInvalid)
	}
	f.off = int(off)
	return off, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if f.closed || !f.write {
		return 0, fmt.Errorf("spill: memfs write %s: %w", f.name, fs.ErrClosed)
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.data.b = append(f.data.b, p...)
	return len(p), nil
}

func (f *memFile) Sync() error {
	if f.closed {
		return fmt.Errorf("spill: memfs sync %s: %w", f.name, fs.ErrClosed)
	}
	return nil
}

func (f *memFile) Close() error {
	if f.closed {
		return fmt.Errorf("spill: memfs close %s: %w", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}

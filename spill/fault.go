package spill

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// Op is a kind of file system operation that FaultFS counts and can fail.
type Op uint8

// The operations FaultFS counts. Read and Write count every call on a File.
const (
	OpCreate Op = iota
	OpOpen
	OpWrite
	OpRead
	OpSync
	OpRemove
	numOps
)

var opNames = [numOps]string{"create", "open", "write", "read", "sync", "remove"}

// String returns "create", "open", "write", "read", "sync" or "remove".
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// ErrInjected is wrapped by every error a FaultFS makes up.
var ErrInjected = errors.New("spill: injected fault")

// FaultFS wraps an FS and fails chosen operations, for tests. A failed
// operation is not passed on to the wrapped FS. It is safe for concurrent use.
type FaultFS struct {
	inner FS

	mu     sync.Mutex
	count  [numOps]int
	failAt [numOps]int // fail when count reaches failAt; 0 = never
}

var _ FS = (*FaultFS)(nil)

// NewFaultFS wraps inner.
func NewFaultFS(inner FS) *FaultFS { return &FaultFS{inner: inner} }

// FailNth makes the n-th operation of kind op from now on (1-based) fail with
// an error that wraps ErrInjected and names op and file. n <= 0 cancels.
func (f *FaultFS) FailNth(op Op, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n <= 0 {
		f.failAt[op] = 0
		return
	}
	f.failAt[op] = f.count[op] + n
}

// Count returns the number of operations of kind op so far, failed ones included.
func (f *FaultFS) Count(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[op]
}

// check counts one operation and returns the injected error if it is the one to fail.
func (f *FaultFS) check(op Op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count[op]++
	if f.count[op] == f.failAt[op] {
		f.failAt[op] = 0
		return fmt.Errorf("spill: faultfs %s %s: %w", op, name, ErrInjected)
	}
	return nil
}

// Create implements FS.
func (f *FaultFS) Create(name string) (File, error) {
	if err := f.check(OpCreate, name); err != nil {
		return nil, err
	}
	file, err := f.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, name: name, inner: file}, nil
}

// Open implements FS.
func (f *FaultFS) Open(name string) (File, error) {
	if err := f.check(OpOpen, name); err != nil {
		return nil, err
	}
	file, err := f.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, name: name, inner: file}, nil
}

// Remove implements FS.
func (f *FaultFS) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

type faultFile struct {
	fs    *FaultFS
	name  string
	inner File
}

func (f *faultFile) Read(p []byte) (int, error) {
	if err := f.fs.check(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.inner.Read(p)
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite, f.name); err != nil {
		return 0, err
	}
	return f.inner.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.check(OpSync, f.name); err != nil {
		return err
	}
	return f.inner.Sync()
}

// Seek moves a file opened for reading; only io.SeekStart is supported.
func (f *faultFile) Seek(off int64, whence int) (int64, error) {
	if whence != io.SeekStart {
		return 0, fmt.Errorf("spill: faultfs seek %s: whence %d not supported", f.name, whence)
	}
	if err := seekTo(f.inner, off); err != nil {
		return 0, err
	}
	return off, nil
}

func (f *faultFile) Close() error { return f.inner.Close() }

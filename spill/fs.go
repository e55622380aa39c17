package spill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FS is the file system spill files live in. Names are flat: no directories, no
// path separators. Implementations are safe for concurrent use; a File is used
// by one goroutine at a time.
type FS interface {
	// Create makes a new, empty file open for writing; it fails if name exists.
	Create(name string) (File, error)
	// Open opens an existing file for reading from its start.
	Open(name string) (File, error)
	// Remove deletes a file. Files open at the time stay readable until closed.
	Remove(name string) error
}

// File is an open spill file: written sequentially after Create, read
// sequentially after Open.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	// Sync marks the point where a written file is complete (Writer.Finish calls
	// it before Close). What it costs is up to the FS; see DiskFS.
	Sync() error
}

var errBadName = errors.New("spill: bad file name")

func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") {
		return fmt.Errorf("%w %q", errBadName, name)
	}
	return nil
}

// DiskFS keeps files in a private directory that NewDiskFS creates and Close
// removes. It is safe for concurrent use.
type DiskFS struct {
	dir string
}

var _ FS = (*DiskFS)(nil)

// NewDiskFS creates a private directory named "weir-spill-*" under dir (""
// means os.TempDir()) and returns a DiskFS that keeps its files there.
func NewDiskFS(dir string) (*DiskFS, error) {
	d, err := os.MkdirTemp(dir, "weir-spill-*")
	if err != nil {
		return nil, fmt.Errorf("spill: create spill directory: %w", err)
	}
	return &DiskFS{dir: d}, nil
}

// Dir returns the private directory.
func (d *DiskFS) Dir() string { return d.dir }

// Close removes the directory and everything in it. It is the last-resort
// cleanup (e.g. on Ctrl-C); operators remove their files through Space.Close.
// Files still open keep working on systems that allow it; new ones cannot be
// created. Close may be called more than once.
func (d *DiskFS) Close() error {
	if err := os.RemoveAll(d.dir); err != nil {
		return fmt.Errorf("spill: remove spill directory: %w", err)
	}
	return nil
}

// Create implements FS. The file is created with O_EXCL and mode 0600.
func (d *DiskFS) Create(name string) (File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(d.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	return diskFile{f}, nil
}

// Open implements FS.
func (d *DiskFS) Open(name string) (File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(d.dir, name))
	if err != nil {
		return nil, err
	}
	return diskFile{f}, nil
}

// Remove implements FS.
func (d *DiskFS) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return os.Remove(filepath.Join(d.dir, name))
}

// diskFile is an *os.File whose Sync does nothing: spill files never outlive the
// process that wrote them, so durability buys nothing and fsync would only add
// write-back stalls to every spill.
type diskFile struct{ *os.File }

func (diskFile) Sync() error { return nil }

// seekTo moves a file just opened for reading to offset off: by Seek if the
// File is an io.Seeker, else by reading and discarding off bytes.
func seekTo(f File, off int64) error {
	if sk, ok := f.(io.Seeker); ok {
		_, err := sk.Seek(off, io.SeekStart)
		return err
	}
	n, err := io.CopyN(io.Discard, f, off)
	if err == nil && n < off {
		err = io.ErrUnexpectedEOF
	}
	return err
}

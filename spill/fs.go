package spill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// removes. It is safe for concurrent use. While it is open the file
// .<directory>.owner beside the directory is locked (flock), so that
// RemoveStale tells the directories of live processes from those a killed
// one left.
type DiskFS struct {
	dir   string
	mu    sync.Mutex
	owner *os.File
}

// ownerPath is the locked file of the DiskFS in directory d.
func ownerPath(d string) string { return filepath.Join(filepath.Dir(d), "."+filepath.Base(d)+".owner") }

// spillPattern names the directories NewDiskFS creates.
const spillPattern = "weir-spill-*"

// RemoveStale removes from dir ("" means os.TempDir()) the directories
// "weir-spill-*" of DiskFS whose process is gone: a process killed while
// it ran left them, spill files and the disk state backend's store in
// them. A directory whose owner file is locked belongs to a live process
// and stays, and one without an owner file (not a DiskFS's) is left alone.
// It returns the directories removed.
func RemoveStale(dir string) ([]string, error) {
	if !canLock {
		return nil, nil
	}
	if dir == "" {
		dir = os.TempDir()
	}
	matches, err := filepath.Glob(filepath.Join(dir, spillPattern))
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	var removed []string
	for _, d := range matches {
		f, err := os.Open(ownerPath(d))
		if err != nil {
			continue // not a DiskFS's, or gone meanwhile
		}
		if flockExclusive(f) != nil {
			f.Close()
			continue // its process runs
		}
		err = os.RemoveAll(d)
		if err == nil {
			err = os.Remove(ownerPath(d))
		}
		f.Close()
		if errors.Is(err, fs.ErrNotExist) {
			continue // another process swept it between our open and our lock
		}
		if err != nil {
			return removed, fmt.Errorf("spill: remove the stale %s: %w", d, err)
		}
		removed = append(removed, d)
	}
	return removed, nil
}

var _ FS = (*DiskFS)(nil)

// NewDiskFS creates a private directory named "weir-spill-*" under dir (""
// means os.TempDir()) and returns a DiskFS that keeps its files there. It
// first removes the directories that killed processes left there
// (RemoveStale).
func NewDiskFS(dir string) (*DiskFS, error) {
	if _, err := RemoveStale(dir); err != nil {
		return nil, err
	}
	d, err := os.MkdirTemp(dir, spillPattern)
	if err != nil {
		return nil, fmt.Errorf("spill: create spill directory: %w", err)
	}
	owner, err := lockOwner(d)
	if err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("spill: create spill directory: %w", err)
	}
	return &DiskFS{dir: d, owner: owner}, nil
}

// lockOwner creates the locked owner file of directory d: locked under
// another name, then renamed, so that RemoveStale never sees it unlocked.
func lockOwner(d string) (*os.File, error) {
	tmp := ownerPath(d) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err = flockExclusive(f); err == nil {
		if _, err = fmt.Fprintf(f, "pid %d\n", os.Getpid()); err == nil {
			err = os.Rename(tmp, ownerPath(d))
		}
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	return f, nil
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
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.owner != nil {
		err := os.Remove(ownerPath(d.dir))
		d.owner.Close()
		d.owner = nil
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("spill: remove spill directory: %w", err)
		}
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

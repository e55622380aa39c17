package checkpoint

import (
	"io"
	"io/fs"
	"os"
)

// fileSystem is what the storage does to files, so that tests can inject a
// failure after any step. Every step that changes the disk goes through it;
// reads may too.
type fileSystem interface {
	MkdirAll(path string) error
	// Create creates or truncates a file for writing.
	Create(path string) (writeFile, error)
	Open(path string) (io.ReadCloser, error)
	ReadFile(path string) ([]byte, error)
	ReadDir(path string) ([]fs.DirEntry, error)
	Stat(path string) (fs.FileInfo, error)
	Rename(from, to string) error
	RemoveAll(path string) error
	Remove(path string) error
	// SyncDir makes the entries of directory path durable.
	SyncDir(path string) error
}

// writeFile is a file being written.
type writeFile interface {
	io.Writer
	Sync() error
	Close() error
}

// osFS is the operating system's file system.
type osFS struct{}

func (osFS) MkdirAll(path string) error { return os.MkdirAll(path, 0o755) }

func (osFS) Create(path string) (writeFile, error) { return os.Create(path) }

func (osFS) Open(path string) (io.ReadCloser, error) { return os.Open(path) }

func (osFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

func (osFS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

func (osFS) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

func (osFS) Rename(from, to string) error { return os.Rename(from, to) }

func (osFS) RemoveAll(path string) error { return os.RemoveAll(path) }

func (osFS) Remove(path string) error { return os.Remove(path) }

func (osFS) SyncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeDurable writes b to path and fsyncs it.
func writeDurable(fsys fileSystem, path string, b []byte) error {
	f, err := fsys.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// errInjected is the failure faultFS injects.
var errInjected = errors.New("injected failure")

// faultFS counts the steps that change the disk (each write, sync, close,
// mkdir, rename and remove) and fails step failAt (0-based, counted from
// when armed). With crash, every step after it fails too, and a failing
// write writes half its bytes first: the process stopped there.
type faultFS struct {
	fileSystem
	armed   bool
	crash   bool
	failAt  int
	steps   int
	crashed bool
	fired   bool
}

// step counts a step and returns the failure to inject, if any.
func (f *faultFS) step(what string) error {
	if !f.armed {
		return nil
	}
	if f.crashed {
		return fmt.Errorf("%s: %w (after the crash)", what, errInjected)
	}
	n := f.steps
	f.steps++
	if n != f.failAt {
		return nil
	}
	f.fired = true
	if f.crash {
		f.crashed = true
	}
	return fmt.Errorf("%s: %w at step %d", what, errInjected, n)
}

func (f *faultFS) MkdirAll(path string) error {
	if err := f.step("mkdir " + path); err != nil {
		return err
	}
	return f.fileSystem.MkdirAll(path)
}

func (f *faultFS) Create(path string) (writeFile, error) {
	if err := f.step("create " + path); err != nil {
		return nil, err
	}
	w, err := f.fileSystem.Create(path)
	if err != nil {
		return nil, err
	}
	return &faultFile{w: w, fs: f, path: path}, nil
}

func (f *faultFS) Rename(from, to string) error {
	if err := f.step("rename " + from); err != nil {
		return err
	}
	return f.fileSystem.Rename(from, to)
}

func (f *faultFS) RemoveAll(path string) error {
	if err := f.step("remove " + path); err != nil {
		return err
	}
	return f.fileSystem.RemoveAll(path)
}

func (f *faultFS) Remove(path string) error {
	if err := f.step("remove " + path); err != nil {
		return err
	}
	return f.fileSystem.Remove(path)
}

func (f *faultFS) SyncDir(path string) error {
	if err := f.step("sync " + path); err != nil {
		return err
	}
	return f.fileSystem.SyncDir(path)
}

func (f *faultFS) ReadDir(path string) ([]fs.DirEntry, error) { return f.fileSystem.ReadDir(path) }

func (f *faultFS) Open(path string) (io.ReadCloser, error) { return f.fileSystem.Open(path) }

// faultFile is a file written through faultFS.
type faultFile struct {
	w    writeFile
	fs   *faultFS
	path string
}

func (f *faultFile) Write(p []byte) (int, error) {
	before := f.fs.crashed
	if err := f.fs.step("write " + f.path); err != nil {
		if f.fs.crashed && !before {
			// The crash tears this write: half of it reaches the file.
			n, _ := f.w.Write(p[:len(p)/2])
			return n, err
		}
		return 0, err
	}
	return f.w.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.step("fsync " + f.path); err != nil {
		return err
	}
	return f.w.Sync()
}

func (f *faultFile) Close() error {
	err := f.fs.step("close " + f.path)
	if cerr := f.w.Close(); err == nil {
		err = cerr
	}
	return err
}

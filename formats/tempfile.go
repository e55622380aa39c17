package formats

import (
	"fmt"
	"os"
	"path/filepath"
)

// TempFile is the file a Writer fills: a temporary file beside its final path,
// and the Close / Commit / Abort / Remove protocol of Writer around it, which
// every sink shares. A writer embeds it, checks its State before each call and
// ends its Close with Finish; Commit, Abort and Remove it gets as they are.
type TempFile struct {
	F     *os.File
	Final string
	State WriterState
	// OnAbort, when set, releases what the writer holds besides the file; Abort
	// calls it for a writer that is still open.
	OnAbort func()
	pkg     string // the implementing package, for errors: "formats/csv"
}

// CreateTemp creates the temporary file of final in final's directory; pkg
// names the implementing package in errors.
func CreateTemp(pkg, final string) (*TempFile, error) {
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%s: create %s: %w", pkg, final, err)
	}
	return &TempFile{F: f, Final: final, pkg: pkg}, nil
}

// Check returns an error naming op and the file unless the writer is in state
// want.
func (t *TempFile) Check(op string, want WriterState) error {
	if t.State != want {
		return fmt.Errorf("%s: %s %s: writer is %s", t.pkg, op, t.Final, t.State)
	}
	return nil
}

// Errorf wraps err as a failure of op on the file.
func (t *TempFile) Errorf(op string, err error) error {
	return fmt.Errorf("%s: %s %s: %w", t.pkg, op, t.Final, err)
}

// Finish ends a writer's Close once it has written everything (err is the
// first error it met, already wrapped): it syncs and closes the file; on any
// error it removes the file and returns the error.
func (t *TempFile) Finish(err error) error {
	if err == nil {
		if serr := t.F.Sync(); serr != nil {
			err = t.Errorf("close", serr)
		}
	}
	if cerr := t.F.Close(); err == nil && cerr != nil {
		err = t.Errorf("close", cerr)
	}
	if err != nil {
		t.State = Aborted
		os.Remove(t.F.Name())
		return err
	}
	t.State = Closed
	return nil
}

// Mode is the permission an output gets when it is committed: what os.Create
// gives under the usual umask (the temporary file is private until then).
const Mode os.FileMode = 0o644

// Commit renames the closed temporary file to its final name, readable by
// all (Mode).
func (t *TempFile) Commit() error {
	if err := t.Check("commit", Closed); err != nil {
		return err
	}
	err := os.Chmod(t.F.Name(), Mode)
	if err == nil {
		err = os.Rename(t.F.Name(), t.Final)
	}
	if err != nil {
		t.State = Aborted
		os.Remove(t.F.Name())
		return t.Errorf("commit", err)
	}
	t.State = Committed
	return nil
}

// Abort removes the temporary file, closing it first if it is open. It is a
// no-op after Commit and safe to repeat.
func (t *TempFile) Abort() {
	switch t.State {
	case Open:
		if t.OnAbort != nil {
			t.OnAbort()
		}
		t.F.Close()
	case Closed:
	default:
		return
	}
	t.State = Aborted
	os.Remove(t.F.Name())
}

// Remove deletes the committed file; see Remover.
func (t *TempFile) Remove() error {
	if err := t.Check("remove", Committed); err != nil {
		return err
	}
	t.State = Aborted
	if err := os.Remove(t.Final); err != nil {
		return t.Errorf("remove", err)
	}
	return nil
}

package linesort

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/weirdata/weir/formats"
)

// rangeFileSink writes the sorted ranges into one file: range i's writer writes
// at the range's offset, so all ranges write at once. The file has a temporary
// name until the job commits; then the last writer's Commit renames it.
type rangeFileSink struct {
	job     *Job
	path    string
	sizes   *rangeSizes
	bufSize int // each writer's buffer

	mu        sync.Mutex
	sized     bool     // the file has its final length
	f         *os.File // the temporary output, shared by the writers
	open      int      // writers created and not yet committed or aborted
	committed int
	failed    bool
}

func (s *rangeFileSink) Create(ctx context.Context, i, n int) (formats.Writer[string], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		f, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".weir-*")
		if err != nil {
			return nil, fmt.Errorf("create output: %w", err)
		}
		s.f, s.committed, s.failed, s.sized = f, 0, false, false
	}
	s.open++
	return &rangeWriter{ctx: ctx, s: s, i: i, n: n, off: -1, buf: make([]byte, 0, s.bufSize)}, nil
}

// release ends one writer; the last one closes the file and renames it (all
// committed) or removes it.
func (s *rangeFileSink) release(commit bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if commit {
		s.committed++
	} else {
		s.failed = true
	}
	if s.open--; s.open > 0 {
		return nil
	}
	f := s.f
	s.f = nil
	if s.failed {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(s.path); err == nil {
		mode = fi.Mode().Perm()
	}
	err := f.Chmod(mode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("output %s: %w", s.path, err)
	}
	return nil
}

// rangeWriter writes one range; see rangeFileSink.
type rangeWriter struct {
	_     cacheLinePad // the writers of two ranges run at once
	ctx   context.Context
	s     *rangeFileSink
	i, n  int
	off   int64 // where the next flush writes; -1 until known
	start int64
	buf   []byte
	state int // 0 open, 1 closed, 2 committed or aborted
	_     cacheLinePad
}

// cacheLinePad keeps the fields of a struct that one goroutine writes per
// record off the cache lines of its neighbours in memory.
type cacheLinePad [64]byte

// CopiesValues implements formats.ValueCopier: Write copies the lines into its
// buffer.
func (w *rangeWriter) CopiesValues() {}

func (w *rangeWriter) Write(batch []string) error {
	for _, l := range batch {
		if err := writeLine(w, l); err != nil {
			return err
		}
	}
	return nil
}

// WriteRaw implements formats.RawWriter: it writes one line given as its
// bytes (the sort's merge hands them over without a copy).
func (w *rangeWriter) WriteRaw(l []byte) error { return writeLine(w, l) }

// writeLine appends l and a newline to w's buffer, flushing it first when
// full (a line longer than the buffer gets a buffer of its own).
func writeLine[L string | []byte](w *rangeWriter, l L) error {
	if w.off < 0 {
		if err := w.locate(); err != nil {
			return err
		}
	}
	if len(w.buf)+len(l)+1 > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
		if len(l)+1 > cap(w.buf) {
			w.buf = make([]byte, 0, len(l)+1)
		}
	}
	w.buf = append(w.buf, l...)
	w.buf = append(w.buf, '\n')
	return nil
}

// locate learns where the range starts; the first range to learn the output's
// size gives the file its length.
func (w *rangeWriter) locate() error {
	off, total, err := w.s.sizes.offset(w.ctx, w.i)
	if err != nil {
		return err
	}
	w.s.job.merging.Store(true)
	w.off, w.start = off, off
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if !w.s.sized && total > 0 && w.n > 1 {
		// Give the file its length before any range writes into it.
		if err := w.s.f.Truncate(total); err != nil {
			return fmt.Errorf("size output: %w", err)
		}
	}
	w.s.sized = true
	return nil
}

func (w *rangeWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.s.f.WriteAt(w.buf, w.off); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	w.off += int64(len(w.buf))
	w.s.job.written.Add(int64(len(w.buf)))
	w.buf = w.buf[:0]
	if w.s.job.hook != nil {
		w.s.job.hook("write")
	}
	return nil
}

func (w *rangeWriter) Close() error {
	if w.state != 0 {
		return fmt.Errorf("output %s: close after close, commit or abort", w.s.path)
	}
	if w.off < 0 {
		if err := w.locate(); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	w.state = 1
	if end, _, _ := w.s.sizes.offset(w.ctx, w.i+1); w.off != end {
		return fmt.Errorf("internal error: range %d ends at byte %d, counted %d", w.i, w.off, end)
	}
	return nil
}

func (w *rangeWriter) Commit() error {
	if w.state != 1 {
		return fmt.Errorf("output %s: commit without close", w.s.path)
	}
	w.state = 2
	return w.s.release(true)
}

func (w *rangeWriter) Abort() {
	if w.state == 2 {
		return
	}
	w.state = 2
	w.s.release(false)
}

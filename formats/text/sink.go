package text

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weirdata/weir/formats"
)

// Sink writes records as lines. It implements formats.Sink[string].
type Sink struct {
	path string
}

var _ formats.Sink[string] = (*Sink)(nil)

// NewSink returns a sink writing path (a file when n == 1, else a directory of
// part-00000.txt, ...).
func NewSink(path string) formats.Sink[string] { return &Sink{path: path} }

// Create opens the writer of subtask i of n.
func (s *Sink) Create(ctx context.Context, i, n int) (formats.Writer[string], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	final, err := formats.PartPath(s.path, i, n, ".txt")
	if err != nil {
		return nil, fmt.Errorf("formats/text: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("formats/text: create %s: %w", final, err)
	}
	return &writer{f: f, w: bufio.NewWriterSize(f, 1<<20), final: final}, nil
}

// writer writes lines to a temporary file; see formats.Writer.
type writer struct {
	f     *os.File
	w     *bufio.Writer
	final string
	err   error
	done  bool
}

// Write appends each record followed by '\n'.
func (w *writer) Write(batch []string) error {
	if w.done {
		return fmt.Errorf("formats/text: write %s after commit or abort", w.final)
	}
	if w.err != nil {
		return w.err
	}
	for _, s := range batch {
		w.w.WriteString(s)
		if err := w.w.WriteByte('\n'); err != nil {
			w.err = fmt.Errorf("formats/text: write %s: %w", w.f.Name(), err)
			return w.err
		}
	}
	return nil
}

// Commit flushes, syncs and renames the file to its final name.
func (w *writer) Commit() error {
	if w.done {
		return fmt.Errorf("formats/text: commit %s twice or after abort", w.final)
	}
	err := w.w.Flush()
	if err == nil {
		err = w.f.Close()
	} else {
		w.f.Close()
	}
	if err == nil {
		err = os.Rename(w.f.Name(), w.final)
	}
	w.done = true
	if err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("formats/text: commit %s: %w", w.final, err)
	}
	return nil
}

// Abort closes and removes the temporary file. It is a no-op after Commit.
func (w *writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.f.Name())
}

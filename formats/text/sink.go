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
	err   error // a write error: Write and Close return it
	state formats.WriterState
}

var _ formats.Remover = (*writer)(nil)

// CopiesValues implements formats.ValueCopier: Write copies the lines into its
// buffer.
func (w *writer) CopiesValues() {}

// Write appends each record followed by '\n'.
func (w *writer) Write(batch []string) error {
	if w.state != formats.Open {
		return fmt.Errorf("formats/text: write %s: writer is %s", w.final, w.state)
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

// Close flushes, syncs and closes the temporary file; on error it removes it.
func (w *writer) Close() error {
	if w.state != formats.Open {
		return fmt.Errorf("formats/text: close %s: writer is %s", w.final, w.state)
	}
	err := w.err
	if err == nil {
		if err = w.w.Flush(); err == nil {
			err = w.f.Sync()
		}
		if err != nil {
			err = fmt.Errorf("formats/text: close %s: %w", w.final, err)
		}
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("formats/text: close %s: %w", w.final, cerr)
	}
	if err != nil {
		w.state = formats.Aborted
		os.Remove(w.f.Name())
		return err
	}
	w.state = formats.Closed
	return nil
}

// Commit renames the closed temporary file to its final name.
func (w *writer) Commit() error {
	if w.state != formats.Closed {
		return fmt.Errorf("formats/text: commit %s: writer is %s", w.final, w.state)
	}
	if err := os.Rename(w.f.Name(), w.final); err != nil {
		w.state = formats.Aborted
		os.Remove(w.f.Name())
		return fmt.Errorf("formats/text: commit %s: %w", w.final, err)
	}
	w.state = formats.Committed
	return nil
}

// Abort removes the temporary file, closing it first if it is open. It is a
// no-op after Commit.
func (w *writer) Abort() {
	switch w.state {
	case formats.Open:
		w.f.Close()
	case formats.Closed:
	default:
		return
	}
	w.state = formats.Aborted
	os.Remove(w.f.Name())
}

// Remove deletes the committed file; see formats.Remover.
func (w *writer) Remove() error {
	if w.state != formats.Committed {
		return fmt.Errorf("formats/text: remove %s: writer is %s", w.final, w.state)
	}
	w.state = formats.Aborted
	if err := os.Remove(w.final); err != nil {
		return fmt.Errorf("formats/text: remove %s: %w", w.final, err)
	}
	return nil
}

package text

import (
	"bufio"
	"context"
	"fmt"

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
	tf, err := formats.CreateTemp("formats/text", final)
	if err != nil {
		return nil, err
	}
	return &writer{TempFile: tf, w: bufio.NewWriterSize(tf.F, 1<<20)}, nil
}

// writer writes lines to a temporary file; see formats.Writer.
type writer struct {
	*formats.TempFile // Commit, Abort and Remove
	w                 *bufio.Writer
	err               error // a write error: Write and Close return it
}

var _ formats.Remover = (*writer)(nil)

// CopiesValues implements formats.ValueCopier: Write copies the lines into its
// buffer.
func (w *writer) CopiesValues() {}

// Write appends each record followed by '\n'.
func (w *writer) Write(batch []string) error {
	if err := w.Check("write", formats.Open); err != nil {
		return err
	}
	if w.err != nil {
		return w.err
	}
	for _, s := range batch {
		w.w.WriteString(s)
		if err := w.w.WriteByte('\n'); err != nil {
			w.err = fmt.Errorf("formats/text: write %s: %w", w.F.Name(), err)
			return w.err
		}
	}
	return nil
}

// Close flushes, syncs and closes the temporary file; on error it removes it.
func (w *writer) Close() error {
	if err := w.Check("close", formats.Open); err != nil {
		return err
	}
	err := w.err
	if err == nil {
		if ferr := w.w.Flush(); ferr != nil {
			err = w.Errorf("close", ferr)
		}
	}
	return w.Finish(err)
}

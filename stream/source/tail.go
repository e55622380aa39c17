package source

import (
	"context"
	"fmt"
	"os"
)

// Tail reads the lines of one file and then the lines appended to it while it
// runs, as tail -f does: at the end of the file the reader waits
// PollInterval and looks again, and a last line without its '\n' waits for
// it. The split is the file; its position is the byte offset of the next
// line. A file that shrinks below that offset is an error. The source is
// unbounded; a missing file is an error here.
func Tail(path string, opts ...Option) (Source[string], error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("stream/source: tail: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("stream/source: tail %s: is a directory", path)
	}
	c := newConfig(opts)
	return &simple[string]{
		cfg:  c,
		kind: Unbounded,
		splits: func(int) ([]Split, error) {
			return []Split{{ID: path, Len: -1}}, nil
		},
		open: func(_ context.Context, _ ReaderContext, s Split) (splitReader[string], error) {
			tr, err := openText(s, c)
			if err != nil {
				return nil, err
			}
			tr.l.partial, tr.poll = true, c.poll
			return tr, nil
		},
	}, nil
}

package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Text reads a file's lines as formats/text does: a record is a line without
// its '\n' (a '\r' before it is kept), and a last line without '\n' is a
// record. A split is one file; its position is the byte offset of the next
// line and the number of lines before it, so a reader resumes mid-file.
func Text() Format[string] { return textFormat{} }

type textFormat struct{}

func (textFormat) ext() string { return "" }

func (textFormat) open(_ context.Context, s Split, c config) (splitReader[string], error) {
	f, err := openAt(s.ID, s.Offset)
	if err != nil {
		return nil, fmt.Errorf("stream/source: %w", err)
	}
	l := newLineReader(f, "\n", c.read, s.Offset)
	return &textReader{f: f, l: l, s: s, buf: make([]string, 0, c.batch)}, nil
}

// textReader reads the lines of a file, or tails it.
type textReader struct {
	f    *os.File
	l    *lineReader
	s    Split
	buf  []string
	poll time.Duration // tailing: wait this long when no complete line has arrived
}

func (r *textReader) next(_ context.Context, limit int) ([]string, time.Duration, error) {
	b := r.buf[:0]
	var wait time.Duration
	var end error
	for len(b) < min(cap(b), limit) {
		line, err := r.l.line()
		if err == errNoData {
			wait, end = r.poll, r.checkShrunk()
			break
		}
		if err == io.EOF {
			end = io.EOF
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("stream/source: read %s: %w", r.s.ID, err)
		}
		b = append(b, line)
	}
	r.buf = b
	r.s.Offset = r.l.pos
	r.s.Records += int64(len(b))
	if len(b) > 0 {
		return b, 0, nil
	}
	return nil, wait, end
}

// checkShrunk fails a tailed file that became shorter than what was read.
func (r *textReader) checkShrunk() error {
	st, err := r.f.Stat()
	if err != nil {
		return fmt.Errorf("stream/source: tail %s: %w", r.s.ID, err)
	}
	if st.Size() < r.l.pos {
		return fmt.Errorf("stream/source: tail %s: the file shrank to %d bytes, below the read offset %d", r.s.ID, st.Size(), r.l.pos)
	}
	return nil
}

func (r *textReader) position() Split { return r.s }
func (r *textReader) close() error    { return r.f.Close() }

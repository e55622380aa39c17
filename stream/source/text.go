package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/weirdata/weir/formats"
)

// Text reads a file's lines as formats/text does: a record is a line without
// its '\n' (a '\r' before it is kept), and a last line without '\n' is a
// record. A split is one file; its position is the byte offset of the next
// line and the number of lines before it, so a reader resumes mid-file. A
// file is read as it was when its split was opened: to its size then, and,
// if it grew since, to its last complete line there (an unterminated last
// line is being written, and is not a record). A line longer than
// MaxLineSize is an error naming the file, the line and the limit.
func Text() Format[string] { return textFormat{} }

type textFormat struct{}

func (textFormat) ext() string { return "" }

func (textFormat) open(_ context.Context, s Split, c config) (splitReader[string], error) {
	if err := formats.NotRegular(s.ID); err != nil {
		return nil, fmt.Errorf("stream/source: %w", err)
	}
	r, err := openText(s, c)
	if err != nil {
		return nil, err
	}
	st, err := r.f.Stat()
	if err != nil {
		r.f.Close()
		return nil, fmt.Errorf("stream/source: %w", err)
	}
	if st.Size() < s.Offset {
		r.f.Close()
		return nil, fmt.Errorf("stream/source: %s: the file has %d bytes, fewer than its position %d", s.ID, st.Size(), s.Offset)
	}
	r.size = st.Size()
	r.l.r = io.LimitReader(r.f, r.size-s.Offset)
	return r, nil
}

// openText opens the file of s at its position, for reading to its end.
func openText(s Split, c config) (*textReader, error) {
	f, err := openAt(s.ID, s.Offset)
	if err != nil {
		return nil, fmt.Errorf("stream/source: %w", err)
	}
	l := newLineReader(f, "\n", c, s.Offset)
	return &textReader{f: f, l: l, s: s, size: -1, buf: make([]string, 0, c.batch)}, nil
}

// textReader reads the lines of a file, or tails it.
type textReader struct {
	f    *os.File
	l    *lineReader
	s    Split
	size int64 // the file's size when opened (-1: tailed, read to its live end)
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
		if tl, ok := err.(tooLong); ok {
			return nil, 0, fmt.Errorf("stream/source: %s line %d: %w", r.s.ID, r.s.Records+int64(len(b))+1, tl)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("stream/source: read %s: %w", r.s.ID, err)
		}
		if r.l.cut && r.grew() {
			r.l.pos -= int64(len(line)) // not read: the next run reads it whole
			end = io.EOF
			break
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

// grew reports whether a file read to its size at open is longer now: its
// unterminated last line there is still being written.
func (r *textReader) grew() bool {
	if r.size < 0 {
		return false
	}
	st, err := r.f.Stat()
	return err == nil && st.Size() > r.size
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

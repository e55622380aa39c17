package text

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// lineReader reads the lines of one byte range of a file by the split rule
// (see the package doc): seek skips to the first line starting in the range,
// and a line starting before the range's end is read whole, past the end if it
// crosses it.
type lineReader struct {
	f     *os.File
	name  string
	chunk int
	// fresh makes every fill read into a new buffer, so that the lines handed
	// out stay valid; without it the buffer is reused and a line is valid only
	// until the next call of line.
	fresh bool
	// maxLine is the longest line in bytes; 0 is no limit.
	maxLine int
	buf     []byte // buf[off:] is unread
	off     int
	eof     bool
	pos     int64 // file offset of buf[off]
}

// seek positions r at the first line starting at or after start: with start
// > 0, just past the first '\n' at or after start-1.
func (r *lineReader) seek(start int64) error {
	if start == 0 {
		return nil
	}
	if _, err := r.f.Seek(start-1, io.SeekStart); err != nil {
		return fmt.Errorf("formats/text: seek %s: %w", r.name, err)
	}
	r.pos = start - 1
	for {
		if r.off == len(r.buf) {
			if r.eof {
				return nil
			}
			r.off, r.buf = 0, r.buf[:0] // nothing kept while skipping
			if err := r.fill(); err != nil {
				return err
			}
			continue
		}
		if i := bytes.IndexByte(r.buf[r.off:], '\n'); i >= 0 {
			r.off += i + 1
			r.pos += int64(i + 1)
			return nil
		}
		r.pos += int64(len(r.buf) - r.off)
		r.off = len(r.buf)
	}
}

// fill reads the next chunk behind the unread bytes: into a new buffer when
// r.fresh, else into the same one, moved to its front and grown when full.
func (r *lineReader) fill() error {
	rest := len(r.buf) - r.off
	if r.maxLine > 0 && rest > r.maxLine {
		return fmt.Errorf("formats/text: %s: the line at byte %d is longer than %d bytes", r.name, r.pos, r.maxLine)
	}
	size := max(r.chunk, rest*2)
	var nb []byte
	if r.fresh || cap(r.buf) < size {
		nb = make([]byte, size)
	} else {
		nb = r.buf[:cap(r.buf)]
	}
	copy(nb, r.buf[r.off:])
	n, err := io.ReadFull(r.f, nb[rest:])
	r.buf, r.off = nb[:rest+n], 0
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.eof = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("formats/text: read %s: %w", r.name, err)
	}
	return nil
}

// line returns the next line without its '\n', or io.EOF. r.pos before the
// call is the line's offset in the file.
func (r *lineReader) line() ([]byte, error) {
	for {
		rest := r.buf[r.off:]
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			r.off += i + 1
			r.pos += int64(i + 1)
			return rest[:i:i], nil
		}
		if r.eof {
			if len(rest) == 0 {
				return nil, io.EOF
			}
			r.off = len(r.buf)
			r.pos += int64(len(rest))
			return rest[:len(rest):len(rest)], nil
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// linesBefore counts the '\n' bytes of f before offset off: the number of
// lines that start before the line starting at off.
func linesBefore(f *os.File, name string, off int64) (int, error) {
	buf := make([]byte, 1<<20)
	n := 0
	for pos := int64(0); pos < off; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		n += bytes.Count(buf[:k], []byte{'\n'})
		pos += int64(k)
		if err != nil && pos < off {
			return 0, fmt.Errorf("formats/text: read %s: %w", name, err)
		}
	}
	return n, nil
}

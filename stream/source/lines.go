package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// errNoData says a line reader has no complete line now: a tailed file or a
// socket has nothing more yet.
var errNoData = errors.New("stream/source: no data yet")

// tooLong is the error of a line longer than the reader's limit.
type tooLong struct{ limit int }

func (e tooLong) Error() string {
	return fmt.Sprintf("a line longer than the limit of %d bytes (MaxLineSize)", e.limit)
}

// lineReader cuts a byte stream into records at a delimiter and counts the
// bytes before the next record, so that a reader can resume there. Records
// are strings that alias the buffer they were read into; a buffer is filled
// only past what has been handed out and replaced (never overwritten) when
// full, so records stay valid after the batch.
type lineReader struct {
	r       io.Reader
	delim   []byte
	stripCR bool // drop a '\r' before the delimiter (sockets with "\n", as Flink)
	// partial says what an unterminated last record at io.EOF is: a record
	// (files, a closed socket) when false, or bytes that wait for their
	// delimiter (a tailed file) when true.
	partial bool
	chunk   int
	limit   int    // the longest line, its delimiter included
	cut     bool   // the last line returned had no delimiter: the stream ended in it
	buf     []byte // buf[off:] is read and not handed out
	off     int
	eof     bool  // r returned io.EOF (a tailed file: at the last fill)
	pos     int64 // stream offset of buf[off]
}

func newLineReader(r io.Reader, delim string, c config, pos int64) *lineReader {
	return &lineReader{r: r, delim: []byte(delim), chunk: max(c.read, 1), limit: c.maxLine, pos: pos}
}

// line returns the next record, io.EOF at the end of the stream, or
// errNoData when a complete record has not arrived yet. A record longer than
// the limit is a tooLong error. Other errors are the stream's, such as a
// deadline exceeded on a socket.
func (l *lineReader) line() (string, error) {
	l.cut = false
	for {
		rest := l.buf[l.off:]
		if i := bytes.Index(rest, l.delim); i >= 0 {
			if i+len(l.delim) > l.limit {
				return "", tooLong{l.limit}
			}
			l.off += i + len(l.delim)
			l.pos += int64(i + len(l.delim))
			if l.stripCR && i > 0 && rest[i-1] == '\r' {
				i--
			}
			return unsafe.String(unsafe.SliceData(rest), i), nil
		}
		if l.eof {
			if l.partial {
				l.eof = false // look again at the next call
				return "", errNoData
			}
			if len(rest) == 0 {
				return "", io.EOF
			}
			if len(rest) > l.limit {
				return "", tooLong{l.limit}
			}
			l.off = len(l.buf)
			l.pos += int64(len(rest))
			l.cut = true
			return unsafe.String(unsafe.SliceData(rest), len(rest)), nil
		}
		if len(rest) >= l.limit {
			return "", tooLong{l.limit}
		}
		if err := l.fill(); err != nil {
			return "", err
		}
	}
}

// fill reads more bytes after buf, into a new buffer when buf is full.
func (l *lineReader) fill() error {
	if len(l.buf) == cap(l.buf) {
		rest := len(l.buf) - l.off
		nb := make([]byte, rest, max(l.chunk, 2*rest))
		copy(nb, l.buf[l.off:])
		l.buf, l.off = nb, 0
	}
	n, err := l.r.Read(l.buf[len(l.buf):cap(l.buf)])
	l.buf = l.buf[:len(l.buf)+n]
	if errors.Is(err, io.EOF) || (err == nil && n == 0) {
		l.eof = true
		return nil
	}
	return err
}

// openAt opens a file and seeks to offset.
func openAt(path string, offset int64) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

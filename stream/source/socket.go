package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

// Socket reads records from a TCP server, as Flink's socketTextStream(host,
// port, delimiter): it connects when its reader opens the split (a server
// that cannot be reached is an error naming host:port), cuts the bytes at
// delimiter ("\n" when empty; with "\n" a '\r' before it is dropped), and
// ends when the server closes the connection, the bytes after the last
// delimiter being the last record (Flink's default of no reconnection). The
// source is unbounded and has one split, host:port, read by one reader; its
// position counts the bytes and records read, but a socket cannot be read
// again, so a restored reader connects anew and reads what the server sends
// from then on.
func Socket(host string, port int, delimiter string, opts ...Option) (Source[string], error) {
	if port <= 0 || port >= 1<<16 {
		return nil, fmt.Errorf("stream/source: socket port %d is out of range", port)
	}
	if delimiter == "" {
		delimiter = "\n"
	}
	c := newConfig(opts)
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	return &simple[string]{
		cfg:  c,
		kind: Unbounded,
		splits: func(int) ([]Split, error) {
			return []Split{{ID: addr, Len: -1}}, nil
		},
		open: func(ctx context.Context, _ ReaderContext, s Split) (splitReader[string], error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, fmt.Errorf("stream/source: socket %s: %w", addr, err)
			}
			l := newLineReader(conn, delimiter, c.read, s.Offset)
			l.stripCR = delimiter == "\n"
			return &socketReader{conn: conn, l: l, s: s, poll: c.poll, buf: make([]string, 0, c.batch)}, nil
		},
	}, nil
}

// socketReader reads records from a connection, waiting at most poll per
// call so that the reader can look at its other splits; a cancelled ctx ends
// the wait at once.
type socketReader struct {
	conn net.Conn
	l    *lineReader
	s    Split
	poll time.Duration
	buf  []string
	done bool
}

func (r *socketReader) next(ctx context.Context) ([]string, time.Duration, error) {
	if r.done {
		return nil, 0, io.EOF
	}
	if err := r.conn.SetReadDeadline(time.Now().Add(r.poll)); err != nil {
		return nil, 0, fmt.Errorf("stream/source: socket %s: %w", r.s.ID, err)
	}
	// Cancellation ends a blocked read at once.
	stop := context.AfterFunc(ctx, func() { r.conn.SetReadDeadline(time.Now()) })
	defer stop()
	b := r.buf[:0]
	var end error
	for len(b) < cap(b) {
		line, err := r.l.line()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if len(b) == 0 && ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			break
		}
		if err == io.EOF {
			r.done, end = true, io.EOF
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("stream/source: socket %s: %w", r.s.ID, err)
		}
		b = append(b, line)
		if !bytes.Contains(r.l.buf[r.l.off:], r.l.delim) {
			break // hand out what arrived rather than wait for more
		}
	}
	r.buf = b
	r.s.Offset = r.l.pos
	r.s.Records += int64(len(b))
	if len(b) > 0 {
		return b, 0, nil
	}
	return nil, 0, end
}

func (r *socketReader) position() Split { return r.s }
func (r *socketReader) close() error    { return r.conn.Close() }

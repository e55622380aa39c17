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
// that cannot be reached is an error naming host:port) and cuts the bytes at
// delimiter ("\n" when empty; with "\n" a '\r' before it is dropped). When
// the server closes the connection the source ends, the bytes after the last
// delimiter being the last record, unless Reconnect allows it to connect
// again, keeping those bytes as the start of the next record. The source is
// unbounded and has one split, host:port, read by one reader; its position
// counts the bytes and records read, but a socket cannot be read again, so a
// restored reader connects anew and reads what the server sends from then on.
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
			conn, err := dial(ctx, addr)
			if err != nil {
				return nil, err
			}
			l := newLineReader(conn, delimiter, c, s.Offset)
			l.stripCR = delimiter == "\n"
			l.partial = c.retries != 0
			return &socketReader{conn: conn, l: l, s: s, c: c, retries: c.retries, buf: make([]string, 0, c.batch)}, nil
		},
	}, nil
}

// Reconnect lets a Socket source connect again, up to retries times (-1
// without limit), delay after the server closed the connection, as Flink's
// SocketTextStreamFunction with maxNumRetries and delayBetweenRetries (where
// maxNumRetries = n allows n-1 reconnections). A failed reconnection is an
// error naming host:port.
func Reconnect(retries int, delay time.Duration) Option {
	return func(c *config) { c.retries, c.retryDelay = retries, max(delay, 0) }
}

func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("stream/source: socket %s: %w", addr, err)
	}
	return conn, nil
}

// socketReader reads records from a connection, waiting at most
// PollInterval per call so that the reader can look at its other splits; a
// cancelled ctx ends the wait at once. With reconnections left, its line
// reader keeps an unterminated record at the end of a connection (partial),
// and errNoData from it means the server closed the connection.
type socketReader struct {
	conn    net.Conn // nil while waiting to reconnect
	l       *lineReader
	s       Split
	c       config
	retries int       // reconnections left, -1 without limit
	redial  time.Time // when to reconnect
	buf     []string
	done    bool
}

func (r *socketReader) next(ctx context.Context, limit int) ([]string, time.Duration, error) {
	if r.done {
		return nil, 0, io.EOF
	}
	if r.conn == nil {
		if wait := r.redial.Sub(r.c.clock.Now()); wait > 0 {
			return nil, wait, nil
		}
		conn, err := dial(ctx, r.s.ID)
		if err != nil {
			return nil, 0, err
		}
		r.conn, r.l.r = conn, conn
	}
	if err := r.conn.SetReadDeadline(time.Now().Add(r.c.poll)); err != nil {
		return nil, 0, fmt.Errorf("stream/source: socket %s: %w", r.s.ID, err)
	}
	// Cancellation ends a blocked read at once.
	conn := r.conn
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()
	b := r.buf[:0]
	var end error
	var wait time.Duration
	for len(b) < min(cap(b), limit) {
		line, err := r.l.line()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if len(b) == 0 && ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			break
		}
		if err == errNoData {
			// The server closed the connection.
			if err := r.conn.Close(); err != nil {
				return nil, 0, fmt.Errorf("stream/source: socket %s: %w", r.s.ID, err)
			}
			r.conn = nil
			if r.retries > 0 {
				r.retries--
			}
			r.l.partial = r.retries != 0
			r.redial = r.c.clock.Now().Add(r.c.retryDelay)
			wait = r.c.retryDelay
			break
		}
		if err == io.EOF {
			r.done, end = true, io.EOF
			break
		}
		if tl, ok := err.(tooLong); ok {
			return nil, 0, fmt.Errorf("stream/source: socket %s line %d: %w", r.s.ID, r.s.Records+int64(len(b))+1, tl)
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
	return nil, wait, end
}

func (r *socketReader) position() Split { return r.s }
func (r *socketReader) close() error {
	if r.conn == nil {
		return nil
	}
	return r.conn.Close()
}

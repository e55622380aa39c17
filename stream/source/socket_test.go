package source

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serve listens on a local port and writes parts to the first connection,
// pausing between them, then closes it.
func serve(t *testing.T, parts ...string) (host string, port int, wait func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		for _, p := range parts {
			if _, err := io.WriteString(c, p); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	addr := ln.Addr().(*net.TCPAddr)
	return "127.0.0.1", addr.Port, wg.Wait
}

// readSocket reads a socket source to its end.
func readSocket(t *testing.T, src Source[string]) result[string] {
	t.Helper()
	_, rs := newReaders(t, src, 1, nil)
	res := result[string]{bySplit: map[string][]string{}}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		b, err := rs[0].Next(ctx)
		if err == io.EOF {
			return res
		}
		if err != nil {
			t.Fatal(err)
		}
		res.check(t, b)
	}
}

// TestSocket follows Flink's SocketTextStreamFunction: records end at the
// delimiter, a '\r' before "\n" is dropped, a record may arrive in parts,
// and the bytes after the last delimiter are a record when the server
// closes the connection, which ends the source.
func TestSocket(t *testing.T) {
	host, port, wait := serve(t, "one\r\ntwo\nthr", "ee\n\n", "last")
	src, err := Socket(host, port, "\n", PollInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	res := readSocket(t, src)
	wait()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	if want := []string{"one", "two", "three", "", "last"}; !slices.Equal(res.bySplit[addr], want) {
		t.Fatalf("got %q, want %q", res.bySplit[addr], want)
	}
	if !slices.Equal(res.ended, []string{addr}) {
		t.Fatalf("ended %v", res.ended)
	}
}

// TestSocketReconnect follows SocketTextStreamFunction with retries: when
// the server closes the connection the source connects again after the
// delay, and the bytes after the last delimiter continue into the next
// connection's first record; once the retries are used up, a close ends the
// source with its last bytes as a record.
func TestSocketReconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns := []string{"a\nb", "c\nd", "e\nf"}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, data := range conns {
			c, err := ln.Accept()
			if err != nil {
				t.Error(err)
				return
			}
			io.WriteString(c, data)
			c.Close()
		}
	})
	port := ln.Addr().(*net.TCPAddr).Port
	src, err := Socket("127.0.0.1", port, "\n", Reconnect(2, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	res := readSocket(t, src)
	wg.Wait()
	if want := []string{"a", "bc", "de", "f"}; !slices.Equal(res.all, want) {
		t.Fatalf("got %q, want %q", res.all, want)
	}
}

func TestSocketDelimiter(t *testing.T) {
	host, port, wait := serve(t, "a||b|", "|c\r||", "||d")
	src, err := Socket(host, port, "||")
	if err != nil {
		t.Fatal(err)
	}
	res := readSocket(t, src)
	wait()
	if want := []string{"a", "b", "c\r", "", "d"}; !slices.Equal(res.all, want) {
		t.Fatalf("got %q, want %q", res.all, want)
	}
}

func TestSocketParseNamesLine(t *testing.T) {
	host, port, wait := serve(t, "1\n2\nthree\n")
	src, err := Socket(host, port, "\n")
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, Parse(src, strconv.Atoi), 1, nil)
	_, err = nextRecords(t.Context(), rs[0], 3)
	wait()
	if want := net.JoinHostPort(host, strconv.Itoa(port)) + " line 3: "; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one naming %q", err, want)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !pe.Unrecoverable() {
		t.Errorf("err = %v, want an unrecoverable *ParseError of line 3", err)
	}
}

func TestSocketUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	src, err := Socket("127.0.0.1", port, "\n")
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	_, err = rs[0].Next(t.Context())
	want := "stream/source: socket 127.0.0.1:" + strconv.Itoa(port) + ": "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want connection refused naming %s", err, want)
	}
	if _, err := Socket("localhost", 70000, "\n"); err == nil {
		t.Fatal("port 70000 accepted")
	}
}

// TestSocketLineTooLong fails a record longer than MaxLineSize, naming
// host:port, the line and the limit, instead of buffering it whole.
func TestSocketLineTooLong(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		// the reader hangs up after the limit: later writes may fail
		io.WriteString(c, "a\nb\n"+strings.Repeat("x", 600)+"\nc\n")
	})
	host, port := "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	src, err := Socket(host, port, "\n", MaxLineSize(256), ReadSize(16))
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got, err := nextRecords(ctx, rs[0], 4)
	want := host + ":" + strconv.Itoa(port) + " line 3: a line longer than the limit of 256 bytes"
	if len(got) > 2 || err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%q, %v; want an error naming %q", got, err, want)
	}
	rs[0].Close()
}

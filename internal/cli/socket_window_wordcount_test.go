package cli

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/examples/streaming"
)

// TestSocketWindowWordCount serves lines on a local TCP listener, keeps the
// connection open for several windows and closes it: the "word : count"
// lines of every word add up to its occurrences in Java's split("\\s") of
// the lines, at parallelism 1 and 2.
func TestSocketWindowWordCount(t *testing.T) {
	lines := []string{"hello world hello", "to be  or not to be", "hello", "", "tab\tseparated words "}
	want := map[string]int64{}
	for _, l := range lines {
		streaming.JavaSplitWhitespace(l, func(w string) { want[w]++ })
	}
	if want[""] != 2 || want["hello"] != 3 {
		t.Fatalf("split: %v", want)
	}
	line := regexp.MustCompile(`^(.*) : (\d+)$`)
	for _, c := range []struct {
		p     int
		files bool // --output
	}{{1, false}, {2, false}, {2, true}} {
		p := c.p
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, strings.Join(lines, "\n")+"\n")
			time.Sleep(time.Second) // several 100ms windows fire
			c.Close()
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		args := []string{"run", "socket-window-wordcount", "--host", "127.0.0.1",
			"--port", strconv.Itoa(port), "--window", "100ms", "--parallelism", fmt.Sprint(p)}
		out := filepath.Join(t.TempDir(), "out")
		if c.files {
			args = append(args, "--output", out)
		}
		code, stdout, stderr := runWeir(context.Background(), args...)
		ln.Close()
		if code != 0 || stderr != "" {
			t.Fatalf("p%d: exit %d, stderr %q", p, code, stderr)
		}
		lines := printedLines(t, stdout, p)
		if c.files {
			if len(lines) != 0 {
				t.Fatalf("p%d: %d lines printed with --output", p, len(lines))
			}
			lines = readPartsSorted(t, out)
		}
		got := map[string]int64{}
		for _, l := range lines {
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("p%d: line %q", p, l)
			}
			n, _ := strconv.ParseInt(m[2], 10, 64)
			got[m[1]] += n
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("p%d: %v, want %v", p, got, want)
		}
	}
}

// TestSocketWindowWordCountUnreachable fails at the start naming the address.
func TestSocketWindowWordCountUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	code, _, stderr := runWeir(context.Background(), "run", "socket-window-wordcount", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	if code != 1 || !strings.Contains(stderr, fmt.Sprintf("127.0.0.1:%d", port)) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

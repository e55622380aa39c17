// Package proctest holds what the tests that run weir as processes share:
// the weir binary, running a command to its end, the window-stats job's events, reading a
// sink's committed part files, comparing two multisets of lines, and a log
// many goroutines write. It is imported by tests only.
package proctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// RunToEnd runs bin with args and wants exit status 0; it returns the
// standard output.
func RunToEnd(t testing.TB, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("weir %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// Committed returns the lines of the committed part files of dir (names
// not starting with a dot), sorted.
func Committed(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// Diff compares two sorted multisets of lines: the lines of want missing
// from got (lost) and the lines of got beyond want (duplicated).
func Diff(want, got []string) (lost, dup []string) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && want[i] < got[j]:
			lost = append(lost, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			dup = append(dup, got[j])
			j++
		default:
			i++
			j++
		}
	}
	return lost, dup
}

// WindowStatsEvents writes a CSV of n events (user,ts,amount; timestamps
// 10 ms apart, 7 keys) with stragglers into t's temporary directory and
// returns its path: every 25th event 19 s behind (late for a 5 s tumbling
// window with 2 s of out-of-orderness) and others 1.5 s behind (within
// it). The same n gives the same file.
func WindowStatsEvents(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("user,ts,amount\n")
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		ts := 1_000_000 + int64(i)*10
		switch {
		case i%25 == 24 && ts > 1_020_000:
			ts -= 19_000
		case i%7 == 3:
			ts -= 1_500
		}
		fmt.Fprintf(&b, "u%d,%d,%d\n", r.IntN(7), ts, r.IntN(1000))
	}
	in := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// Log is a buffer many goroutines write: a process's stderr, a
// component's log lines.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

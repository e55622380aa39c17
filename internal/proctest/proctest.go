// Package proctest holds what the tests that run weir as processes share:
// running a command to its end, reading a sink's committed part files, and
// comparing two multisets of lines. It is imported by tests only.
package proctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

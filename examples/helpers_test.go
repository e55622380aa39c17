package examples

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
)

// config is one way to run an example: parallelism and memory budget.
type config struct {
	name        string
	parallelism int
	memory      int64
}

// configs run every example at parallelism 1 and 3, without a budget and with a
// tiny one that makes the aggregations, joins and sorts spill.
var configs = []config{
	{"p1", 1, 0},
	{"p3", 3, 0},
	{"p1-tiny", 1, 256 << 10},
	{"p3-tiny", 3, 256 << 10},
}

// options returns Options for c with a fresh spill directory that must be empty
// when the test ends.
func options(t *testing.T, c config) Options {
	t.Helper()
	tmp := t.TempDir()
	t.Cleanup(func() {
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("spill files left in %s: %v", tmp, ents)
		}
	})
	return Options{Dataset: dataset.Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: 4096, TmpDir: tmp}}
}

// runToStdout runs an example with its result printed, and returns the lines.
func runToStdout(t *testing.T, o Options, run func(context.Context, Options) error) []string {
	t.Helper()
	var buf bytes.Buffer
	o.Stdout = &buf
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return splitLines(buf.String())
}

// runToFile runs an example with its result written to a file, and returns the
// lines, checking that the output directory holds nothing else.
func runToFile(t *testing.T, o Options, run func(context.Context, Options) error) []string {
	t.Helper()
	dir := t.TempDir()
	o.Output = filepath.Join(dir, "result.txt")
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "result.txt" || !ents[0].Type().IsRegular() {
		t.Fatalf("output directory holds %v, want result.txt only", ents)
	}
	data, err := os.ReadFile(o.Output)
	if err != nil {
		t.Fatal(err)
	}
	return splitLines(string(data))
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	if !strings.HasSuffix(s, "\n") {
		return []string{"missing final newline: " + s}
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// writeFile writes lines to a new file in a test directory.
func writeFile(t testing.TB, name string, lines []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkLines compares result lines with the oracle's, which must already be in
// the expected order.
func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: line %d is %q, want %q (%d lines, want %d)", what, i+1, got[i], want[i], len(got), len(want))
		}
	}
	t.Fatalf("%s: %d lines, want %d", what, len(got), len(want))
}

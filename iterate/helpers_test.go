package iterate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
)

// config is one way to run a job: its parallelism and memory budget (0: none).
type config struct {
	name        string
	parallelism int
	memory      int64
}

var configs = []config{{"p1", 1, 0}, {"p3", 3, 0}, {"p2-tiny-memory", 2, 96 << 10}} // tiny: caches and aggregators spill

// newEnv returns an Env for c whose spill directory must be empty after the
// test.
func newEnv(t *testing.T, c config) *dataset.Env {
	t.Helper()
	tmp := t.TempDir()
	t.Cleanup(func() {
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("spill files left in %s: %v", tmp, ents)
		}
	})
	return dataset.New(dataset.Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: 4096, TmpDir: tmp, BatchSize: 64})
}

// execute runs env's program and returns its result.
func execute(t *testing.T, env *dataset.Env) *dataset.Result {
	t.Helper()
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func worksets(s []dataset.SuperstepStats) []int64 {
	out := make([]int64, len(s))
	for i, x := range s {
		out[i] = x.Records
	}
	return out
}

// writeFile writes text to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runSortedJob runs job with config c's options, printing to a buffer, and
// returns the output lines of n records, after checking that the final sort
// passed the iteration's ordered output through.
func runSortedJob(t *testing.T, c config, n int, job func(Options) error) []string {
	t.Helper()
	var out bytes.Buffer
	var plan string
	o := Options{Dataset: dataset.Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: 4096, TmpDir: t.TempDir(), BatchSize: 64},
		Stdout: &out, Executed: func(r *dataset.Result) { plan = r.Plan.Text() }}
	if err := job(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "reuses ORDERED(id)") {
		t.Errorf("the sort does not reuse the iteration's order:\n%s", plan)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	return lines
}

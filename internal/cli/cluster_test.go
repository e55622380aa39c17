package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirdata/weir/cluster"
)

// TestProgramCheck: the cluster's Program names the jobs of weir run and
// weir tpch and their --parallelism, and refuses other commands and bad
// flags.
func TestProgramCheck(t *testing.T) {
	name, slots, err := Program().Check([]string{"run", "window-stats", "--input=/x.csv", "--parallelism", "3"})
	if err != nil || name != "run window-stats" || slots != 3 {
		t.Fatalf("Check = %q, %d, %v", name, slots, err)
	}
	if name, slots, err := Program().Check([]string{"tpch", "--query", "5", "--data", "/d"}); err != nil || name != "tpch" || slots != 0 {
		t.Fatalf("Check tpch = %q, %d, %v", name, slots, err)
	}
	for _, args := range [][]string{{"sort"}, {"run"}, {"run", "window-stats", "--no-such-flag"}, {"jobmanager"}} {
		if _, _, err := Program().Check(args); err == nil {
			t.Errorf("Check(%q) passed", args)
		}
	}
}

// TestProgramSpreads: the DataSet jobs may spread, iterations included,
// unless --adaptive; stream jobs only when they write to --output.
func TestProgramSpreads(t *testing.T) {
	sp, ok := Program().(cluster.Spreader)
	if !ok {
		t.Fatal("the CLI's Program is not a cluster.Spreader")
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"tpch", "--query", "5", "--data", "/d", "--parallelism", "4"}, true},
		{[]string{"tpch", "--query", "5", "--data", "/d", "--adaptive"}, false},
		{[]string{"run", "wordcount", "--input", "/x.txt"}, true},
		{[]string{"run", "enum-triangles"}, true},
		{[]string{"run", "pagerank", "--pages", "/p", "--links", "/l"}, true},
		{[]string{"run", "kmeans"}, true},
		{[]string{"run", "connected-components", "--adaptive"}, false},
		{[]string{"run", "window-stats", "--input=/x.csv"}, false}, // prints its results
		{[]string{"run", "window-stats", "--input=/x.csv", "--output", "/o"}, true},
		{[]string{"run", "window-stats", "--input=/x.csv", "--output", "/o", "--unaligned-checkpoints"}, true},
		{[]string{"run", "window-stats", "--input=/x.csv", "--output", "/o", "--execution-mode", "batch"}, true},
		{[]string{"run", "streaming-wordcount", "--output", "/o"}, true},
		{[]string{"run", "iterate", "--output", "/o"}, true},
		{[]string{"run", "iterate"}, false},
		{[]string{"sort"}, false},
	} {
		if got := sp.Spreads(tc.args); got != tc.want {
			t.Errorf("Spreads(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// partLines returns the lines of the committed part files of dir, sorted.
func partLines(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
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
		lines = append(lines, strings.Fields(string(b))...)
	}
	slices.Sort(lines)
	return lines
}

// TestProgramRun: a stream job run through the cluster's Program
// checkpoints into the attempt's directory through the gate; with a gate
// that accepts, its committed output is the embedded run's; with a gate
// that refuses, the job fails with the gate's error and commits nothing.
func TestProgramRun(t *testing.T) {
	var b strings.Builder
	b.WriteString("user,ts,amount\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "u%d,%d,%d\n", i%5, 1_000_000+i*10, i%100)
	}
	in := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	job := []string{"run", "window-stats", "--input", in, "--key", "user", "--time", "ts", "--value", "amount", "--window", "tumbling:1s"}
	oracle := filepath.Join(t.TempDir(), "oracle")
	if code := Execute(context.Background(), append(slices.Clone(job), "--output", oracle), io.Discard, io.Discard); code != 0 {
		t.Fatalf("embedded run: status %d", code)
	}
	want := partLines(t, oracle)

	run := func(refuse bool) ([]string, []int64, error) {
		out := filepath.Join(t.TempDir(), "out")
		var mu sync.Mutex
		var ids []int64
		var stderr bytes.Buffer
		env := cluster.Env{JobID: strings.Repeat("ab", 16), Attempt: "1-1", CheckpointDir: t.TempDir(), Slots: 2,
			Stdout: io.Discard, Stderr: &stderr,
			Gate: func(ctx context.Context, id int64, path string) error {
				mu.Lock()
				defer mu.Unlock()
				ids = append(ids, id)
				if refuse {
					return errors.New("refused by the test")
				}
				return nil
			}}
		err := Program().Run(context.Background(), append(slices.Clone(job), "--output", out, "--checkpoint-interval", "20ms", "--rate", "3000"), env)
		mu.Lock()
		defer mu.Unlock()
		return partLines(t, out), ids, err
	}
	got, ids, err := run(false)
	if err != nil || !slices.Equal(got, want) || len(ids) < 2 {
		t.Fatalf("accepting gate: %v, %d lines (want %d), gated %v", err, len(got), len(want), ids)
	}
	got, ids, err = run(true)
	if err == nil || !strings.Contains(err.Error(), "refused by the test") || len(got) != 0 || len(ids) != 1 {
		t.Fatalf("refusing gate: %v, committed %d lines, gated %v", err, len(got), ids)
	}
}

package streaming

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
)

// statsInput writes n events over 20 keys, out of order by up to 60 ms,
// and returns the file.
func statsInput(t *testing.T, n int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 9))
	var b strings.Builder
	b.WriteString("user,ts,amount\n")
	ts := int64(1_000_000)
	for range n {
		ts += r.Int64N(20)
		fmt.Fprintf(&b, "u%d,%d,%d\n", r.IntN(20), ts-r.Int64N(60), r.IntN(100))
	}
	p := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// parts returns the lines of the committed part files in dir, sorted.
func parts(t *testing.T, dir string) []string {
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
		lines = append(lines, strings.Split(strings.TrimRight(string(b), "\n"), "\n")...)
	}
	slices.Sort(lines)
	return lines
}

// TestWindowStatsResumesMidFile stops a throttled window-stats job with a
// savepoint while it reads its file and starts it again from the savepoint:
// the two runs' firings are those of one uninterrupted run, each exactly
// once, so the second run went on at the record after the last one the first
// read. The events are out of order by less than the bound: as in Flink, the
// watermark is not part of a snapshot (a restored job starts at the minimal
// watermark), so an event late in one run may be on time after a restore.
func TestWindowStatsResumesMidFile(t *testing.T) {
	in := statsInput(t, 6000)
	dir := t.TempDir()
	params := func(out string) WindowStatsParams {
		return WindowStatsParams{Input: in, Key: "user", Time: "ts", Value: "amount", Window: "tumbling:1s",
			OutOfOrderness: 100 * time.Millisecond, Aggregate: "sum",
			Output: filepath.Join(dir, out)}
	}
	base := Options{Stdout: io.Discard}
	base.Stream.Parallelism = 2
	if err := RunWindowStats(t.Context(), base, params("whole")); err != nil {
		t.Fatal(err)
	}
	want := parts(t, filepath.Join(dir, "whole"))
	if len(want) < 100 {
		t.Fatalf("%d firings", len(want))
	}

	first := base
	first.Stream.SourceRate = 10000 // 0.6 s for the file
	first.Stream.AutoWatermarkInterval = 10 * time.Millisecond
	first.Configure = func(env *stream.Env) { env.EnableCheckpointing(time.Hour) }
	saved := make(chan string, 1)
	first.Stream.Started = func(j *stream.Job) {
		go func() {
			time.Sleep(150 * time.Millisecond)
			path, err := j.StopWithSavepoint(context.Background(), filepath.Join(dir, "sp"))
			if err != nil {
				t.Error(err)
			}
			saved <- path
		}()
	}
	if err := RunWindowStats(t.Context(), first, params("split")); err != nil {
		t.Fatal(err)
	}
	path := <-saved
	if t.Failed() {
		return
	}
	if mid := parts(t, filepath.Join(dir, "split")); len(mid) == 0 || len(mid) >= len(want)/2 {
		t.Fatalf("the first run committed %d of %d firings: it did not stop early in the file", len(mid), len(want))
	}
	snap, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	second := base
	second.Stream.Restore = snap
	if err := RunWindowStats(t.Context(), second, params("split")); err != nil {
		t.Fatal(err)
	}
	if got := parts(t, filepath.Join(dir, "split")); !slices.Equal(got, want) {
		t.Fatalf("stopped and resumed: %d firings, want %d", len(got), len(want))
	}
}

package stream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// TestSinkToFiles writes a word count's final counts (BATCH) through a
// text FileSink at parallelism 2: after the job, the directory holds only
// committed parts (no hidden in-progress or pending file), named
// part-<subtask>-<counter>, whose lines are the naive counts.
func TestSinkToFiles(t *testing.T) {
	dir := t.TempDir()
	lines := wordCountLines(t)
	final := map[string]int{}
	for _, l := range lines {
		tokenize(l, func(wc wordCount) { final[wc.Word]++ })
	}
	var want []string
	for w, c := range final {
		want = append(want, fmt.Sprintf("%s,%d", w, c))
	}
	slices.Sort(want)

	env := New(Options{Parallelism: 2, Mode: Batch})
	words := FlatMap(FromSlice(env, lines), tokenize)
	counts := Sum(KeyBy(words, func(w wordCount) string { return w.Word }),
		func(w wordCount) int { return w.Count }, func(w *wordCount, n int) { w.Count = n })
	SinkTo(Map(counts, func(w wordCount) string { return fmt.Sprintf("%s,%d", w.Word, w.Count) }), sink.Text(dir))
	execute(t, env)

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("hidden file %s left", e.Name())
			continue
		}
		if !strings.HasPrefix(e.Name(), "part-0-") && !strings.HasPrefix(e.Name(), "part-1-") {
			t.Errorf("unexpected file %s", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Split(strings.TrimRight(string(b), "\n"), "\n")...)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("files hold %d lines, want %d", len(got), len(want))
	}
}

// TestSinkToFilesCancelled: an unbounded job cancelled before its input
// ended commits nothing, and its writers remove their hidden parts.
func TestSinkToFilesCancelled(t *testing.T) {
	dir := t.TempDir()
	env := New(Options{Parallelism: 2})
	gen := FromSource(env, source.Generator(func(i int64) int64 { return i }, 0, 0), watermark.NoWatermarks[int64](), "generator")
	SinkTo(Map(gen, func(i int64) string { return strconv.FormatInt(i, 10) }), sink.Text(dir))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// the generator, Map and the sink run chained in one task: wait for the
	// sink's in-progress part
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if es, _ := os.ReadDir(dir); len(es) > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if es, _ := os.ReadDir(dir); len(es) == 0 {
		t.Fatal("the sink wrote nothing")
	}
	j.Cancel()
	if _, err := j.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("file %s left by a cancelled job", e.Name())
	}
}

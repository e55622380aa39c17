package stream

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// gatedRun runs a throttled unbounded generator into a text FileSink with
// checkpoints every 20 ms, gate deciding each; it returns the job's error
// once 4 checkpoints were gated or the job ended, the committed files and
// the ids and paths the gate heard.
func gatedRun(t *testing.T, refuse bool) (error, []string, []int64, []string) {
	t.Helper()
	dir := t.TempDir()
	env := New(Options{Parallelism: 1, SourceRate: 5000, Restart: NoRestart()})
	var mu sync.Mutex
	var ids []int64
	var paths []string
	enough := make(chan struct{})
	errRefused := errors.New("refused by the test")
	cfg := env.EnableCheckpointing(20 * time.Millisecond)
	cfg.Storage = checkpoint.NewMemory(4)
	cfg.CompletionGate = func(ctx context.Context, id int64, path string) error {
		mu.Lock()
		defer mu.Unlock()
		ids, paths = append(ids, id), append(paths, path)
		if len(ids) == 4 {
			close(enough)
		}
		if refuse {
			return errRefused
		}
		return nil
	}
	gen := FromSource(env, source.Generator(func(i int64) int64 { return i }, 0, 0), watermark.NoWatermarks[int64](), "generator")
	SinkTo(Map(gen, func(i int64) string { return strconv.FormatInt(i, 10) }), sink.Text(dir))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := j.Wait(); done <- err }()
	select {
	case err = <-done:
	case <-enough:
		j.Cancel()
		err = <-done
	}
	if refuse && !errors.Is(err, errRefused) {
		t.Fatalf("the job ended with %v, want the gate's error", err)
	}
	ents, rerr := os.ReadDir(dir)
	if rerr != nil && !os.IsNotExist(rerr) {
		t.Fatal(rerr)
	}
	var files []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			files = append(files, e.Name())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return err, files, ids, paths
}

// TestCompletionGateRefuses: a gate that refuses the first checkpoint
// fails the attempt with its error (no restart, TolerableFailures aside),
// and no sink commits anything; the same job with a gate that accepts
// commits part files as its checkpoints complete.
func TestCompletionGateRefuses(t *testing.T) {
	_, files, ids, paths := gatedRun(t, true)
	if len(files) != 0 {
		t.Fatalf("a job whose gate refused committed %v", files)
	}
	if len(ids) != 1 || ids[0] != 1 || paths[0] == "" {
		t.Fatalf("the gate heard %v %q, want checkpoint 1 once with its path", ids, paths)
	}
	err, files, ids, _ := gatedRun(t, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the accepted job ended with %v, want its cancel", err)
	}
	if len(files) == 0 {
		t.Fatalf("a job whose gate accepted %v committed nothing", ids)
	}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("the gate heard checkpoints %v, want 1, 2, ... in order", ids)
		}
	}
}

// TestGateInFlightAtTheEnd: a bounded job whose input ends while the
// completion gate has not answered a checkpoint yet (a JobManager's answer
// on its way) finishes: that checkpoint is aborted, not failed, and the
// final checkpoint, gated too, commits every record once.
func TestGateInFlightAtTheEnd(t *testing.T) {
	const n = 3000
	dir := t.TempDir()
	env := New(Options{Parallelism: 1, SourceRate: 20000, Restart: NoRestart()})
	cfg := env.EnableCheckpointing(10 * time.Millisecond)
	cfg.Storage = checkpoint.NewMemory(4)
	var mu sync.Mutex
	calls := 0
	var pendingErr error // what the held call returned
	cfg.CompletionGate = func(ctx context.Context, id int64, path string) error {
		mu.Lock()
		calls++
		c := calls
		mu.Unlock()
		if c != 2 {
			return nil
		}
		<-ctx.Done() // the second checkpoint's answer never comes before the run ends
		mu.Lock()
		pendingErr = ctx.Err()
		mu.Unlock()
		return ctx.Err()
	}
	gen := FromSource(env, source.Generator(func(i int64) int64 { return i }, n, 0), watermark.NoWatermarks[int64](), "generator")
	SinkTo(Map(gen, func(i int64) string { return strconv.FormatInt(i, 10) }), sink.Text(dir))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatalf("the job failed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls < 3 || pendingErr == nil {
		t.Fatalf("the gate heard %d calls (the held one returned %v), want the held one to end with the run and a final one after", calls, pendingErr)
	}
	lines := map[string]int{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(dir + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Fields(string(b)) {
			lines[l]++
		}
	}
	for i := range n {
		if lines[strconv.Itoa(i)] != 1 {
			t.Fatalf("record %d committed %d times; %d distinct records committed", i, lines[strconv.Itoa(i)], len(lines))
		}
	}
	if len(lines) != n {
		t.Fatalf("%d distinct records committed, want %d", len(lines), n)
	}
}

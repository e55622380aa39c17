package stream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// TestCancelUnbounded starts an unbounded generator job
// (Map -> KeyBy -> Sum -> sink), waits until records flow, and cancels it:
// Wait returns the cancellation, the job is CANCELED, and no goroutine is
// left (goleak in TestMain).
func TestCancelUnbounded(t *testing.T) {
	env := New(Options{Parallelism: 2})
	gen := FromSource(env, source.Generator(func(i int64) int64 { return i }, 0, 0), watermark.NoWatermarks[int64](), "generator")
	pairs := Map(gen, func(i int64) tuple3 { return tuple3{int(i % 7), 1, 0} })
	sums := Sum(KeyBy(pairs, func(v tuple3) int { return v.F0 }), f1, setF1)
	var out int64
	Discard(sums.Filter(func(tuple3) bool { return false })) // chained into Sum's task
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out = 0
		for _, v := range j.Metrics() {
			if v.Name == "Sum" {
				out += v.Total().RecordsIn
			}
		}
		if out > 10000 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if out <= 10000 {
		t.Fatalf("only %d records reached the end of the job", out)
	}
	j.Cancel()
	if _, err := j.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait: %v", err)
	}
	if s := j.Status(); s != flow.Canceled {
		t.Fatalf("status %v", s)
	}
}

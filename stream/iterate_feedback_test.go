package stream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// TestIterateFeedbackSpills: a loop that feeds back bursts of records far
// larger than a 1 MiB budget (each root fans out into 2^depth records of
// 200 bytes, about 10 MiB in flight at the last level) gives exactly the
// closed form's output at parallelism 1 and 2: each root 2^depth times at
// the root's timestamp. The queue spilled (the job's spilled bytes and the
// queues' count), removed each run once read back, and left nothing in the
// spill directory.
func TestIterateFeedbackSpills(t *testing.T) {
	const roots, depth = 400, 7
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			tmp := t.TempDir()
			env := New(Options{Parallelism: p, Memory: 1 << 20, TmpDir: tmp})
			var in []int
			for r := range roots {
				in = append(in, r)
			}
			ts := watermark.ForMonotonousTimestamps[int]().WithTimestampAssigner(func(r int, _ int64) int64 { return int64(r) * 10 })
			type fat struct {
				Root, Depth int
				Pad         string
			}
			src := Map(FromSource(env, source.FromSlice(in), ts, "roots"), func(r int) fat {
				return fat{Root: r, Pad: strings.Repeat("p", 200)}
			})
			got := fanOutFrom(src, depth, func(f *fat) *int { return &f.Depth })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := env.Execute(ctx)
			if err != nil {
				t.Fatal(err)
			}
			count := map[int]int{}
			for _, r := range got.Records() {
				if r.Value.Depth != depth || len(r.Value.Pad) != 200 || r.Timestamp != int64(r.Value.Root)*10 {
					t.Fatalf("record %d at depth %d, pad %d, timestamp %d", r.Value.Root, r.Value.Depth, len(r.Value.Pad), r.Timestamp)
				}
				count[r.Value.Root]++
			}
			if len(count) != roots {
				t.Fatalf("%d roots came out, want %d", len(count), roots)
			}
			for r, n := range count {
				if n != 1<<depth {
					t.Fatalf("root %d came out %d times, want %d", r, n, 1<<depth)
				}
			}
			if res.SpilledBytes() == 0 {
				t.Fatal("nothing spilled under a 1 MiB budget")
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Fatalf("%d entries left in the spill directory", len(left))
			}
		})
	}
}

// TestIterateFeedbackSpillCleanup: a loop that spills its feedback and
// then fails, or is cancelled while records circle forever, removes its
// spill files and releases its memory (the job's manager reports
// reservations left) on the way out.
func TestIterateFeedbackSpillCleanup(t *testing.T) {
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			tmp := t.TempDir()
			env := New(Options{Parallelism: 2, Memory: 1 << 20, TmpDir: tmp})
			in := make([]string, 2000)
			for i := range in {
				in[i] = strings.Repeat("r", 500)
			}
			it := Iterate(FromSlice(env, in), 0)
			var trips atomic.Int64
			boom := errors.New("boom")
			step := Process(it.DataStream, func() ProcessFunction[string, string] {
				return ProcessFunction[string, string]{
					ProcessElement: func(v string, _ *Context, out Collector[string]) error {
						if n := trips.Add(1); fail && n > 200_000 {
							return boom
						}
						out.Collect(v)
						return nil
					},
				}
			})
			it.CloseWith(FlatMap(step, func(v string, emit func(string)) { emit(v); emit(v) }))
			Discard(step)
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !fail {
				for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && trips.Load() < 200_000; {
					time.Sleep(5 * time.Millisecond)
				}
				j.Cancel()
			}
			res, err := j.Wait()
			if fail && !errors.Is(err, boom) || !fail && !errors.Is(err, context.Canceled) {
				t.Fatalf("wait: %v", err)
			}
			if res == nil || res.SpilledBytes() == 0 {
				t.Fatal("the queues spilled nothing under a 1 MiB budget")
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Fatalf("%d entries left in the spill directory", len(left))
			}
		})
	}
}

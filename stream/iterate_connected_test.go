package stream

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// collatzTrip is the feedback of the Collatz loop: a number's start, the
// current value and the steps taken.
type collatzTrip struct {
	Start, Cur int64
	Steps      int
}

type collatzResult struct {
	Start int64
	Steps int
}

func collatzNext(v int64) int64 {
	if v%2 == 0 {
		return v / 2
	}
	return 3*v + 1
}

// collatzSteps is the oracle: the steps from n to 1, naively.
func collatzSteps(n int64) int {
	s := 0
	for ; n != 1; n = collatzNext(n) {
		s++
	}
	return s
}

// collatzLoop counts the Collatz steps of each input number in a
// connected iteration: the input is an int64, the feedback a collatzTrip,
// the head a CoProcess that emits a result at 1 and feeds the trip back
// otherwise.
func collatzLoop(env *Env, in []int64) (*Collected[collatzResult], ConnectedIterativeStreams[int64, collatzTrip]) {
	ts := watermark.ForMonotonousTimestamps[int64]().WithTimestampAssigner(func(v int64, _ int64) int64 { return v * 10 })
	src := FromSource(env, source.FromSlice(in), ts, "numbers")
	its := IterateWithFeedback[int64, collatzTrip](src, loopQuiet)
	again := NewOutputTag[collatzTrip]("again")
	step := func(t collatzTrip, ctx *Context, out Collector[collatzResult]) {
		if t.Cur == 1 {
			out.Collect(collatzResult{Start: t.Start, Steps: t.Steps})
			return
		}
		Output(ctx, again, collatzTrip{Start: t.Start, Cur: collatzNext(t.Cur), Steps: t.Steps + 1})
	}
	res := CoProcess(its.ConnectedStreams, func() CoProcessFunction[int64, collatzTrip, collatzResult] {
		return CoProcessFunction[int64, collatzTrip, collatzResult]{
			ProcessElement1: func(v int64, ctx *Context, out Collector[collatzResult]) error {
				step(collatzTrip{Start: v, Cur: v}, ctx, out)
				return nil
			},
			ProcessElement2: func(t collatzTrip, ctx *Context, out Collector[collatzResult]) error {
				if ts, ok := ctx.Timestamp(); !ok || ts != t.Start*10 {
					return fmt.Errorf("trip %v fed back with timestamp %d", t, ts)
				}
				step(t, ctx, out)
				return nil
			},
		}
	})
	its.CloseWith(GetSideOutput(res, again))
	return Collect(res), its
}

// TestConnectedIterationCollatz: a connected iteration whose feedback
// (collatzTrip) has another type than its input (int64) counts the
// Collatz steps of 1..600 at parallelism 1 and 2, each number once and at
// its timestamp, equal to the naive loop's; maxWait ends the loop.
func TestConnectedIterationCollatz(t *testing.T) {
	var in []int64
	for n := int64(1); n <= 600; n++ {
		in = append(in, n)
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			env := New(Options{Parallelism: p, BatchSize: 16, BufferTimeout: time.Millisecond})
			got, _ := collatzLoop(env, in)
			execute(t, env)
			seen := map[int64]bool{}
			for _, r := range got.Records() {
				if seen[r.Value.Start] {
					t.Fatalf("%d came out twice", r.Value.Start)
				}
				seen[r.Value.Start] = true
				if want := collatzSteps(r.Value.Start); r.Value.Steps != want {
					t.Fatalf("%d: %d steps, want %d", r.Value.Start, r.Value.Steps, want)
				}
				if r.Timestamp != r.Value.Start*10 {
					t.Fatalf("%d has timestamp %d", r.Value.Start, r.Timestamp)
				}
			}
			if len(seen) != len(in) {
				t.Fatalf("%d numbers came out, want %d", len(seen), len(in))
			}
		})
	}
}

type decTrip struct {
	V     int
	Trips int
}

type decStep struct {
	Start, V, Trips int
	Done            bool
}

// TestConnectedIterationCoFlatMap: an iterative decrement whose input is
// an int and whose feedback a decTrip, with CoFlatMap as the head and the
// loop split by Filter: every n comes out once after n trips (the closed
// form), at parallelism 1 and 2 and over an empty input.
func TestConnectedIterationCoFlatMap(t *testing.T) {
	for _, n := range []int{0, 300} {
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprintf("n%d/p%d", n, p), func(t *testing.T) {
				in := make([]int, n)
				for i := range in {
					in[i] = i
				}
				// every trip crosses the network from head to CoFlatMap:
				// a short buffer timeout keeps the loop quick
				env := New(Options{Parallelism: p, BufferTimeout: time.Millisecond})
				its := IterateWithFeedback[int, decStep](FromSlice(env, in), loopQuiet)
				step := CoFlatMap(its.ConnectedStreams,
					func(v int, emit func(decStep)) { emit(decStep{Start: v, V: v, Done: v == 0}) },
					func(s decStep, emit func(decStep)) {
						s.V--
						s.Trips++
						s.Done = s.V == 0
						emit(s)
					})
				its.CloseWith(step.Filter(func(s decStep) bool { return !s.Done }))
				got := Collect(step.Filter(func(s decStep) bool { return s.Done }))
				execute(t, env)
				seen := map[int]bool{}
				for _, s := range got.Values() {
					if seen[s.Start] || s.Trips != s.Start || s.V != 0 {
						t.Fatalf("%+v (seen before: %v), want %d trips once", s, seen[s.Start], s.Start)
					}
					seen[s.Start] = true
				}
				if len(seen) != n {
					t.Fatalf("%d numbers came out, want %d", len(seen), n)
				}
			})
		}
	}
}

// TestConnectedIterationPlan: the plan shows the head, its two outputs
// into the co-operator and the feedback edge from the tail.
func TestConnectedIterationPlan(t *testing.T) {
	env := New(Options{Parallelism: 2})
	collatzLoop(env, []int64{1, 2, 3})
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	want := `STREAMING, 3 tasks
task 0 "numbers" p=2
  #0 numbers source bounded
task 1 "IterationHead" p=2
  #1 IterationHead <- #0 FORWARD from task 0 <- #3 FEEDBACK from task 2
task 2 "CoProcess" p=2
  #2 CoProcess <- #1 FORWARD from task 1 <- #1[feedback] FORWARD from task 1
  #3 IterationTail <- #2[again] FORWARD chained
  #4 Collect <- #2 FORWARD chained
`
	if got := p.Text(); got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
}

// TestIterateCloseWithForeignStream: closing an iteration with a stream
// not made from it fails the program in Flink's words, for both kinds of
// iteration.
func TestIterateCloseWithForeignStream(t *testing.T) {
	env := New(Options{Parallelism: 1})
	it := Iterate(FromSlice(env, []int{1}), time.Millisecond)
	Collect(it.DataStream)
	it.CloseWith(FromSlice(env, []int{2}))
	env2 := New(Options{Parallelism: 1})
	its := IterateWithFeedback[int, string](FromSlice(env2, []int{1}), time.Millisecond)
	Collect(CoMap(its.ConnectedStreams, func(v int) int { return v }, func(s string) int { return len(s) }))
	its.CloseWith(FromSlice(env2, []string{"x"}))
	for _, e := range []*Env{env, env2} {
		_, err := e.Execute(context.Background())
		if err == nil || !strings.Contains(err.Error(), "does not originate from said iteration") {
			t.Fatalf("err = %v", err)
		}
	}
}

// TestConnectedIterationSpills: a connected iteration whose feedback (a
// padded countdown, 64 per input number) holds about 3 MiB in flight
// under a 1 MiB budget spills it and gives the closed form at
// parallelism 1 and 2: every number 64 times, counted down to zero.
func TestConnectedIterationSpills(t *testing.T) {
	type countdown struct {
		Root, Left int
		Pad        string
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			env := New(Options{Parallelism: p, Memory: 1 << 20, TmpDir: t.TempDir(), BufferTimeout: time.Millisecond})
			in := make([]int, 200)
			for i := range in {
				in[i] = i
			}
			its := IterateWithFeedback[int, countdown](FromSlice(env, in), loopQuiet)
			step := CoFlatMap(its.ConnectedStreams,
				func(r int, emit func(countdown)) {
					for range 64 {
						emit(countdown{Root: r, Left: 20, Pad: strings.Repeat("c", 200)})
					}
				},
				func(c countdown, emit func(countdown)) {
					c.Left--
					emit(c)
				})
			its.CloseWith(step.Filter(func(c countdown) bool { return c.Left > 0 }))
			got := Collect(step.Filter(func(c countdown) bool { return c.Left == 0 }))
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			count := map[int]int{}
			for _, c := range got.Values() {
				if len(c.Pad) != 200 {
					t.Fatalf("%+v lost its pad", c.Root)
				}
				count[c.Root]++
			}
			for _, r := range in {
				if count[r] != 64 {
					t.Fatalf("root %d came out %d times, want 64", r, count[r])
				}
			}
			if res.SpilledBytes() == 0 {
				t.Fatal("nothing spilled under a 1 MiB budget")
			}
		})
	}
}

package streamtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

type t2 struct {
	K string
	V int64
}

func (t t2) String() string { return fmt.Sprintf("(%s,%d)", t.K, t.V) }

type t3 struct {
	K, S string
	V    int64
}

func (t t3) String() string { return fmt.Sprintf("(%s,%s,%d)", t.K, t.S, t.V) }

func tumbling3ms(t *testing.T) *window.Tumbling {
	a := window.TumblingEventTimeWindows(3 * time.Millisecond)
	must(t, a.Err())
	return a
}

// runJoin runs build over as and bs, each from a source with its value as
// timestamp, in a job at parallelism p (the inputs end with the maximal
// watermark, so every window fires), and returns the results as
// "value@timestamp" lines, sorted. Flink's CoGroupJoinITCase emits a
// watermark of ts - 1 after each element; its inputs are in order, so no
// element is late either way and the results are the same.
func runJoin[A, B any](t *testing.T, p int, as []A, bs []B, ts func(any) int64, build func(a stream.DataStream[A], b stream.DataStream[B]) stream.DataStream[string]) []string {
	t.Helper()
	env := stream.New(stream.Options{Parallelism: p})
	sa := stream.FromSource(env, source.FromSlice(as), watermark.NoWatermarks[A]().WithTimestampAssigner(func(v A, _ int64) int64 { return ts(v) }), "a").SetParallelism(1)
	sb := stream.FromSource(env, source.FromSlice(bs), watermark.NoWatermarks[B]().WithTimestampAssigner(func(v B, _ int64) int64 { return ts(v) }), "b").SetParallelism(1)
	got := stream.Collect(build(sa, sb))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range got.Records() {
		lines = append(lines, fmt.Sprintf("%s@%d", r.Value, r.Timestamp))
	}
	slices.Sort(lines)
	return lines
}

func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func tsOf(v any) int64 {
	switch x := v.(type) {
	case t2:
		return x.V
	case t3:
		return x.V
	}
	panic("tsOf")
}

// at appends the MaxTimestamp of the 3 ms window holding ts.
func at(line string, ts int64) string { return fmt.Sprintf("%s@%d", line, ts-ts%3+2) }

// TestWindowCoGroup follows Flink's CoGroupJoinITCase.testCoGroup (at
// parallelism 1, as Flink's, so each side keeps its order): 3 ms
// tumbling windows; every key and window with elements on either side is
// handed to the function once, with both sides' elements; the result
// carries the window's MaxTimestamp.
func TestWindowCoGroup(t *testing.T) {
	got := runJoin(t, 1,
		[]t2{{"a", 0}, {"a", 1}, {"a", 2}, {"b", 3}, {"b", 4}, {"b", 5}, {"a", 6}, {"a", 7}, {"a", 8}},
		[]t2{{"a", 0}, {"a", 1}, {"b", 3}, {"c", 6}, {"c", 7}, {"c", 8}}, tsOf,
		func(a, b stream.DataStream[t2]) stream.DataStream[string] {
			k := func(v t2) string { return v.K }
			return stream.CoGroupApply(stream.WindowCoGroup(a, b, k, k, tumbling3ms(t)),
				func(as, bs []t2, out stream.Collector[string]) error {
					var sb strings.Builder
					sb.WriteString("F:")
					for _, v := range as {
						sb.WriteString(v.String())
					}
					sb.WriteString(" S:")
					for _, v := range bs {
						sb.WriteString(v.String())
					}
					out.Collect(sb.String())
					return nil
				})
		})
	checkLines(t, got, []string{
		at("F:(a,0)(a,1)(a,2) S:(a,0)(a,1)", 0),
		at("F:(b,3)(b,4)(b,5) S:(b,3)", 3),
		at("F:(a,6)(a,7)(a,8) S:", 6),
		at("F: S:(c,6)(c,7)(c,8)", 6),
	})
}

var joinA = []t3{{"a", "x", 0}, {"a", "y", 1}, {"a", "z", 2}, {"b", "u", 3}, {"b", "w", 5}, {"a", "i", 6}, {"a", "j", 7}, {"a", "k", 8}}

// pairs turns Flink's expected "first:second" lines into lines with the
// window's MaxTimestamp (from the first element's timestamp).
func pairs(lines ...string) []string {
	var out []string
	for _, l := range lines {
		var ts int64
		fmt.Sscanf(l[strings.LastIndex(l[:strings.Index(l, ":")], ",")+1:], "%d", &ts)
		out = append(out, at(l, ts))
	}
	return out
}

func joinStr(x, y t3) string { return x.String() + ":" + y.String() }

// TestWindowJoin follows Flink's CoGroupJoinITCase.testJoin: the cross
// product of each key's elements per 3 ms window.
func TestWindowJoin(t *testing.T) {
	got := runJoin(t, 1, joinA, []t3{{"a", "u", 0}, {"a", "w", 1}, {"b", "i", 3}, {"b", "k", 5}, {"a", "x", 6}, {"a", "z", 8}}, tsOf,
		func(a, b stream.DataStream[t3]) stream.DataStream[string] {
			k := func(v t3) string { return v.K }
			return stream.JoinApply(stream.WindowJoin(a, b, k, k, tumbling3ms(t)), joinStr)
		})
	checkLines(t, got, pairs(
		"(a,x,0):(a,u,0)", "(a,x,0):(a,w,1)", "(a,y,1):(a,u,0)", "(a,y,1):(a,w,1)",
		"(a,z,2):(a,u,0)", "(a,z,2):(a,w,1)", "(b,u,3):(b,i,3)", "(b,u,3):(b,k,5)",
		"(b,w,5):(b,i,3)", "(b,w,5):(b,k,5)", "(a,i,6):(a,x,6)", "(a,i,6):(a,z,8)",
		"(a,j,7):(a,x,6)", "(a,j,7):(a,z,8)", "(a,k,8):(a,x,6)", "(a,k,8):(a,z,8)",
	))
}

// TestWindowSelfJoin follows Flink's CoGroupJoinITCase.testSelfJoin: a
// stream joined with itself pairs every two elements of a key and window.
func TestWindowSelfJoin(t *testing.T) {
	got := runJoin(t, 1, joinA, []t3(nil), tsOf, func(a, _ stream.DataStream[t3]) stream.DataStream[string] {
		k := func(v t3) string { return v.K }
		return stream.JoinApply(stream.WindowJoin(a, a, k, k, tumbling3ms(t)), joinStr)
	})
	checkLines(t, got, pairs(
		"(a,x,0):(a,x,0)", "(a,x,0):(a,y,1)", "(a,x,0):(a,z,2)",
		"(a,y,1):(a,x,0)", "(a,y,1):(a,y,1)", "(a,y,1):(a,z,2)",
		"(a,z,2):(a,x,0)", "(a,z,2):(a,y,1)", "(a,z,2):(a,z,2)",
		"(b,u,3):(b,u,3)", "(b,u,3):(b,w,5)", "(b,w,5):(b,u,3)", "(b,w,5):(b,w,5)",
		"(a,i,6):(a,i,6)", "(a,i,6):(a,j,7)", "(a,i,6):(a,k,8)",
		"(a,j,7):(a,i,6)", "(a,j,7):(a,j,7)", "(a,j,7):(a,k,8)",
		"(a,k,8):(a,i,6)", "(a,k,8):(a,j,7)", "(a,k,8):(a,k,8)",
	))
}

// TestWindowJoinSlidingSession checks a sliding and a session window join
// against a direct computation of Flink's rules: each pair of elements of
// a key joins once per window holding both, with its MaxTimestamp.
func TestWindowJoinSlidingSession(t *testing.T) {
	as := []t2{{"a", 0}, {"a", 4}, {"b", 5}, {"a", 13}, {"b", 30}}
	bs := []t2{{"a", 2}, {"a", 9}, {"b", 7}, {"a", 25}, {"b", 31}}
	run := func(asg window.Assigner[window.TimeWindow]) []string {
		return runJoin(t, 2, as, bs, tsOf, func(a, b stream.DataStream[t2]) stream.DataStream[string] {
			k := func(v t2) string { return v.K }
			return stream.JoinApply(stream.WindowJoin(a, b, k, k, asg), func(x, y t2) string { return x.String() + y.String() })
		})
	}
	// sliding 10 ms every 5 ms: the windows [s, s+10) with s a multiple of 5
	var want []string
	for _, x := range as {
		for _, y := range bs {
			for s := int64(-5); s <= 30 && x.K == y.K; s += 5 {
				if x.V >= s && x.V < s+10 && y.V >= s && y.V < s+10 {
					want = append(want, fmt.Sprintf("%v%v@%d", x, y, s+9))
				}
			}
		}
	}
	sl := window.SlidingEventTimeWindows(10*time.Millisecond, 5*time.Millisecond)
	must(t, sl.Err())
	checkLines(t, run(sl), want)
	// sessions with a 5 ms gap over both inputs: key a 0,2,4,9,13 form
	// [0,18) (4+5 touches 9), 25 is alone; key b 5,7 -> [5,12), 30,31 -> [30,36)
	ss := window.EventTimeSessionWindows(5 * time.Millisecond)
	must(t, ss.Err())
	checkLines(t, run(ss), []string{
		"(a,0)(a,2)@17", "(a,0)(a,9)@17", "(a,4)(a,2)@17", "(a,4)(a,9)@17", "(a,13)(a,2)@17", "(a,13)(a,9)@17",
		"(b,5)(b,7)@11", "(b,30)(b,31)@35",
	})
}

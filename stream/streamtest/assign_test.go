package streamtest

import (
	"math"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/watermark"
)

// The tests of AssignTimestampsAndWatermarks follow Flink's
// TimestampsAndWatermarksOperatorTest, case by case.

const autoWatermarkInterval = 50 * time.Millisecond

// periodicGen is the test's PeriodicWatermarkGenerator: it does not keep
// the watermark rising itself, the operator must.
func periodicGen(watermark.Context) watermark.Generator[int] {
	cur := int64(math.MinInt64)
	return watermark.Funcs[int]{
		Event: func(_ int, ts int64, _ watermark.Output) { cur = ts },
		Periodic: func(out watermark.Output) {
			if cur == math.MinInt64 {
				out.EmitWatermark(math.MinInt64)
				return
			}
			out.EmitWatermark(cur - 1)
		},
	}
}

// punctuatedGen is the test's PunctuatedWatermarkGenerator over (bool,
// ts) pairs coded as ints: an even value emits its timestamp at once.
func punctuatedGen(watermark.Context) watermark.Generator[int] {
	return watermark.Funcs[int]{Event: func(v int, ts int64, out watermark.Output) {
		if v%2 == 0 {
			out.EmitWatermark(ts)
		}
	}}
}

func assignHarness(t *testing.T, gen func(watermark.Context) watermark.Generator[int]) *Harness[int, int] {
	t.Helper()
	s := watermark.ForGenerator(gen).WithTimestampAssigner(func(v int, _ int64) int64 { return int64(v) })
	h, err := New(Options{AutoWatermarkInterval: autoWatermarkInterval}, func(in stream.DataStream[int]) stream.DataStream[int] {
		return in.AssignTimestampsAndWatermarks(s)
	})
	must(t, err)
	t.Cleanup(func() { h.Close() })
	return h
}

var iv = autoWatermarkInterval.Milliseconds()

func TestAssignInputWatermarksAreNotForwarded(t *testing.T) {
	h := assignHarness(t, periodicGen)
	must(t, h.ProcessWatermark(42))
	must(t, h.SetProcessingTime(iv))
	expect(t, h)
}

func TestAssignInputStatusesAreNotForwarded(t *testing.T) {
	h := assignHarness(t, periodicGen)
	must(t, h.ProcessWatermarkStatus(true))
	must(t, h.SetProcessingTime(iv))
	expect(t, h)
}

func TestAssignLongMaxInputWatermarkIsForwarded(t *testing.T) {
	h := assignHarness(t, periodicGen)
	must(t, h.ProcessWatermark(math.MaxInt64))
	expect(t, h, wm(math.MaxInt64))
}

func TestAssignPeriodicWatermarksEmitOnPeriodicEmit(t *testing.T) {
	h := assignHarness(t, periodicGen)
	must(t, h.ProcessElement(2, 1))
	must(t, h.SetProcessingTime(iv))
	expect(t, h, rec(2, 2), wm(1))
	h.ClearOutput()
	must(t, h.ProcessElement(4, 1))
	must(t, h.SetProcessingTime(2*iv))
	expect(t, h, rec(4, 4), wm(3))
}

func TestAssignPeriodicWatermarksOnlyEmitOnPeriodicEmit(t *testing.T) {
	h := assignHarness(t, periodicGen)
	must(t, h.ProcessElement(2, 1))
	expect(t, h, rec(2, 2))
}

func TestAssignPeriodicWatermarksDoNotRegress(t *testing.T) {
	h := assignHarness(t, periodicGen)
	must(t, h.ProcessElement(4, 1))
	must(t, h.SetProcessingTime(iv))
	expect(t, h, rec(4, 4), wm(3))
	h.ClearOutput()
	must(t, h.ProcessElement(2, 1))
	must(t, h.SetProcessingTime(2*iv))
	expect(t, h, rec(2, 2))
}

func TestAssignPunctuatedWatermarksEmitImmediately(t *testing.T) {
	h := assignHarness(t, punctuatedGen)
	must(t, h.ProcessElement(2, 1))
	expect(t, h, rec(2, 2), wm(2))
	h.ClearOutput()
	must(t, h.ProcessElement(4, 1))
	expect(t, h, rec(4, 4), wm(4))
}

func TestAssignPunctuatedWatermarksDoNotRegress(t *testing.T) {
	h := assignHarness(t, punctuatedGen)
	must(t, h.ProcessElement(4, 1))
	expect(t, h, rec(4, 4), wm(4))
	h.ClearOutput()
	must(t, h.ProcessElement(2, 1))
	expect(t, h, rec(2, 2))
}

// TestAssignWatermarkAfterItsRecords: a punctuated watermark emitted in
// the middle of a batch follows the records before it and precedes those
// after it.
func TestAssignWatermarkAfterItsRecords(t *testing.T) {
	h := assignHarness(t, punctuatedGen)
	must(t, h.ProcessElements([]stream.Record[int]{{Value: 1}, {Value: 3}, {Value: 6}, {Value: 5}, {Value: 8}, {Value: 7}}))
	expect(t, h, rec(1, 1), rec(3, 3), rec(6, 6), wm(6), rec(5, 5), rec(8, 8), wm(8), rec(7, 7))
}

// TestAssignNegativeTimestamps: every timestamp passes, the extremes
// included.
func TestAssignNegativeTimestamps(t *testing.T) {
	never := func(watermark.Context) watermark.Generator[int] { return watermark.Funcs[int]{} }
	h := assignHarness(t, never)
	vals := []int{math.MinInt64, -1, 0, 1, 2, 3, math.MaxInt64}
	var want []Item[int]
	for _, v := range vals {
		must(t, h.ProcessElement(v, 7))
		want = append(want, rec(v, int64(v)))
	}
	expect(t, h, want...)
}

// TestAssignIdleness: a generator with idleness marks the output idle
// after its timeout without events, and active again with the next
// watermark.
func TestAssignIdleness(t *testing.T) {
	s := watermark.ForMonotonousTimestamps[int]().WithTimestampAssigner(func(v int, _ int64) int64 { return int64(v) }).
		WithIdleness(3 * autoWatermarkInterval)
	h, err := New(Options{AutoWatermarkInterval: autoWatermarkInterval}, func(in stream.DataStream[int]) stream.DataStream[int] {
		return in.AssignTimestampsAndWatermarks(s)
	})
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement(10, 0))
	for i := int64(1); i <= 6; i++ {
		must(t, h.SetProcessingTime(i*iv))
	}
	must(t, h.ProcessElement(20, 0))
	must(t, h.SetProcessingTime(7*iv))
	got := h.Output()
	want := []Item[int]{rec(10, 10), wm(9), {IsStatus: true, Idle: true}, rec(20, 20), {IsStatus: true}, wm(19)}
	if len(got) != len(want) {
		t.Fatalf("output\ngot  %v\nwant %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("output\ngot  %v\nwant %v", got, want)
		}
	}
}

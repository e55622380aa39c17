package streamtest

import (
	"slices"
	"testing"

	"github.com/weirdata/weir/stream"
)

// TestGroupedReduce follows Flink's StreamGroupedReduceOperatorTest.testGroupedReduce:
// integers keyed by themselves, summed; each running result keeps its
// record's timestamp, and watermarks pass in order.
func TestGroupedReduce(t *testing.T) {
	h, err := New(Options{}, func(in stream.DataStream[int]) stream.DataStream[int] {
		return stream.KeyBy(in, identity).Reduce(func(a, b int) int { return a + b })
	})
	must(t, err)
	defer h.Close()
	const initial = 0
	for i, v := range []int{1, 1, 2, 2, 3} {
		must(t, h.ProcessElement(v, initial+int64(i)+1))
	}
	must(t, h.ProcessWatermark(initial+5))
	expect(t, h, rec(1, 1), rec(2, 2), rec(2, 3), rec(4, 4), rec(3, 5), wm(5))
}

// TestChainSideOutputs runs a chain (Map, then Process emitting to a side
// output) in the harness: the main output and the side output keep the
// records' timestamps.
func TestChainSideOutputs(t *testing.T) {
	odd := stream.NewOutputTag[string]("odd")
	h, err := New(Options{}, func(in stream.DataStream[int]) stream.DataStream[int] {
		doubled := stream.Map(in, func(v int) int { return v + 1 })
		return stream.Process(doubled, func() stream.ProcessFunction[int, int] {
			return stream.ProcessFunction[int, int]{ProcessElement: func(v int, ctx *stream.Context, out stream.Collector[int]) error {
				if v%2 == 1 {
					stream.Output(ctx, odd, "odd")
					return nil
				}
				out.Collect(v)
				return nil
			}}
		})
	})
	must(t, err)
	defer h.Close()
	for i := range 4 {
		must(t, h.ProcessElement(i, int64(10*i)))
	}
	expect(t, h, rec(2, 10), rec(4, 30))
	side, err := SideOutput(h, odd)
	must(t, err)
	want := []stream.Record[string]{{Value: "odd", Timestamp: 0}, {Value: "odd", Timestamp: 20}}
	if !slices.Equal(side, want) {
		t.Fatalf("side output %v, want %v", side, want)
	}
}

package streamtest

import (
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/window"
)

type evEl struct {
	K string
	V int
}

// evSum sums a window's values into an evEl.
type evSum struct{}

func (evSum) CreateAccumulator() int64    { return 0 }
func (evSum) Add(e evEl, acc int64) int64 { return acc + int64(e.V) }
func (evSum) GetResult(acc int64) int64   { return acc }
func (evSum) Merge(a, b int64) int64      { return a + b }

var _ state.AggregateFunction[evEl, int64, int64] = evSum{}

// TestWindowElementAllocs: the window operator's element path (keys of a
// run hashed, windows assigned, contents prefetched and updated, trigger
// and cleanup timers) allocates nothing once the windows of the batch
// exist, for tumbling and sliding event-time windows; the sums the
// windows fire with match the count of elements pushed.
func TestWindowElementAllocs(t *testing.T) {
	tumbling := window.TumblingEventTimeWindows(time.Second)
	if err := tumbling.Err(); err != nil {
		t.Fatal(err)
	}
	sliding := window.SlidingEventTimeWindows(2*time.Second, time.Second)
	if err := sliding.Err(); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	for _, c := range []struct {
		name string
		a    window.Assigner[window.TimeWindow]
		wins int64 // windows per element
	}{{"tumbling", tumbling, 1}, {"sliding", sliding, 2}} {
		t.Run(c.name, func(t *testing.T) {
			h, err := New(Options{}, func(in stream.DataStream[evEl]) stream.DataStream[int64] {
				return stream.WindowAggregate(stream.Window(stream.KeyBy(in, func(e evEl) string { return e.K }), c.a), state.AggregateFunction[evEl, int64, int64](evSum{}))
			})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := h.Close(); err != nil {
					t.Error(err)
				}
			}()
			b := make([]stream.Record[evEl], 1000)
			for i := range b {
				b[i] = stream.Record[evEl]{Value: evEl{K: keys[i%len(keys)], V: 1}, Timestamp: 1500 + int64(i%400)}
			}
			if err := h.ProcessElements(b); err != nil { // the windows and timers
				t.Fatal(err)
			}
			const runs = 50
			if n := testing.AllocsPerRun(runs, func() {
				if err := h.ProcessElements(b); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%v allocations per batch of %d records", n, len(b))
			}
			if err := h.ProcessWatermark(10_000); err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, r := range h.Records() {
				total += r.Value
			}
			// AllocsPerRun runs the function once more to warm up
			if want := (runs + 2) * int64(len(b)) * c.wins; total != want {
				t.Fatalf("the windows summed %d elements, want %d", total, want)
			}
		})
	}
}

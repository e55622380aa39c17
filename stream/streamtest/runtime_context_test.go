package streamtest

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
)

// kv is a keyed record of the runtime context tests.
type kv struct{ K, V int }

// summing is a KeyedProcessFunction that keeps per key, through its
// KeyedRuntimeContext, the count (value state), the values (list state),
// the sum (reducing state) and the values seen (map state), and emits
// "key:count:len:sum:distinct" per record; it counts records and marks a
// meter per record in its metric group.
func summing() stream.KeyedProcessFunction[int, kv, string] {
	var (
		count    state.ValueState[int]
		values   state.ListState[int]
		sum      state.ReducingState[int]
		distinct state.MapState[int, bool]
		records  *metrics.Counter
		rate     *metrics.Meter
	)
	return stream.KeyedProcessFunction[int, kv, string]{
		Open: func(rc *stream.KeyedRuntimeContext[int]) (err error) {
			if count, err = stream.GetState(rc, state.ValueDescriptor[int]{Name: "count"}); err != nil {
				return err
			}
			if values, err = stream.GetListState(rc, state.ListDescriptor[int]{Name: "values"}); err != nil {
				return err
			}
			if sum, err = stream.GetReducingState(rc, state.ReducingDescriptor[int]{Name: "sum", Reduce: func(a, b int) int { return a + b }}); err != nil {
				return err
			}
			if distinct, err = stream.GetMapState(rc, state.MapDescriptor[int, bool]{Name: "distinct"}); err != nil {
				return err
			}
			records = rc.MetricGroup().Counter("records")
			rate = rc.MetricGroup().Meter("rate", 10*time.Second)
			return nil
		},
		ProcessElement: func(r kv, ctx *stream.KeyedContext[int], out stream.Collector[string]) error {
			records.Inc()
			rate.MarkEvent()
			c, _ := count.Value()
			count.Update(c + 1)
			values.Add(r.V)
			sum.Add(r.V)
			distinct.Put(r.V, true)
			s, _ := sum.Get()
			d := 0
			for range distinct.Keys() {
				d++
			}
			out.Collect(fmt.Sprintf("%d:%d:%d:%d:%d", ctx.CurrentKey(), c+1, len(values.Get()), s, d))
			return nil
		},
	}
}

// summingOracle is what summing emits for rs after before, per record.
func summingOracle(before, rs []kv) []string {
	type acc struct {
		n, sum int
		seen   map[int]bool
	}
	m := map[int]*acc{}
	var out []string
	for i, r := range append(slices.Clone(before), rs...) {
		a := m[r.K]
		if a == nil {
			a = &acc{seen: map[int]bool{}}
			m[r.K] = a
		}
		a.n++
		a.sum += r.V
		a.seen[r.V] = true
		if i >= len(before) {
			out = append(out, fmt.Sprintf("%d:%d:%d:%d:%d", r.K, a.n, a.n, a.sum, len(a.seen)))
		}
	}
	return out
}

func kvs(from, n int) []kv {
	out := make([]kv, n)
	for i := range out {
		v := from + i
		out[i] = kv{K: v % 4, V: v % 7}
	}
	return out
}

func recordValues(items []Item[string]) []string {
	var out []string
	for _, it := range items {
		if !it.IsWatermark && !it.IsStatus {
			out = append(out, it.Record.Value)
		}
	}
	return out
}

// metric returns the sample identified id, failing the test without one.
func metric(t *testing.T, h interface {
	Metrics() ([]metrics.Sample, error)
}, id string) metrics.Sample {
	t.Helper()
	ms, err := h.Metrics()
	must(t, err)
	for _, m := range ms {
		if m.Identifier() == id {
			return m
		}
	}
	t.Fatalf("no metric %s in %v", id, ms)
	return metrics.Sample{}
}

// TestKeyedStateThroughRuntimeContext: keyed state by descriptor through
// the KeyedRuntimeContext behaves as the backend's: the output equals a
// per-key oracle, a snapshot restored into a new harness carries on from
// the state, and the metrics of the restored harness start at zero (as
// Flink's after a restore). The meter's rate under the harness's manual
// clock is the records over the seconds since its start.
func TestKeyedStateThroughRuntimeContext(t *testing.T) {
	key := func(r kv) int { return r.K }
	h, err := Keyed(Options{ProcessingTime: 1000}, key, summing)
	must(t, err)
	first := kvs(0, 30)
	for _, r := range first {
		must(t, h.ProcessElement(r, 0))
	}
	if got, want := recordValues(h.Output()), summingOracle(nil, first); !slices.Equal(got, want) {
		t.Fatalf("output\ngot  %v\nwant %v", got, want)
	}
	if m := metric(t, h, "KeyedProcess.0.records"); m.Count != 30 {
		t.Fatalf("records counter %d, want 30", m.Count)
	}
	must(t, h.SetProcessingTime(1000+6000))
	if m := metric(t, h, "KeyedProcess.0.rate"); m.Count != 30 || math.Abs(m.Value-5) > 1e-9 {
		t.Fatalf("meter %d events at %v/s, want 30 at 5/s (30 over 6 s)", m.Count, m.Value)
	}
	snap, err := h.Snapshot()
	must(t, err)
	must(t, h.Close())

	h2, err := Keyed(Options{ProcessingTime: 7000}, key, summing)
	must(t, err)
	must(t, h2.Restore(snap))
	if m := metric(t, h2, "KeyedProcess.0.records"); m.Count != 0 {
		t.Fatalf("records counter %d after the restore, want 0", m.Count)
	}
	second := kvs(30, 20)
	for _, r := range second {
		must(t, h2.ProcessElement(r, 0))
	}
	if got, want := recordValues(h2.Output()), summingOracle(first, second); !slices.Equal(got, want) {
		t.Fatalf("output after the restore\ngot  %v\nwant %v", got, want)
	}
	if m := metric(t, h2, "KeyedProcess.0.records"); m.Count != 20 {
		t.Fatalf("records counter %d, want the 20 records since the restore", m.Count)
	}
	must(t, h2.SetProcessingTime(7000+4000))
	if m := metric(t, h2, "KeyedProcess.0.rate"); math.Abs(m.Value-5) > 1e-9 {
		t.Fatalf("meter at %v/s, want 5/s (20 over 4 s)", m.Value)
	}
	must(t, h2.Close())
}

// TestRuntimeContextHarnessSubtask: a function in a harness of subtask 2
// of 4 sees that subtask, and its metric group is scoped by it.
func TestRuntimeContextHarnessSubtask(t *testing.T) {
	var seen *stream.RuntimeContext
	h, err := New(Options{Parallelism: 4, Subtask: 2}, func(in stream.DataStream[int]) stream.DataStream[int] {
		return stream.RichMap(in, func() stream.RichMapFunction[int, int] {
			var c *metrics.Counter
			return stream.RichMapFunction[int, int]{
				Open: func(rc *stream.RuntimeContext) error {
					seen = rc
					c = rc.MetricGroup().AddGroup("io").Counter("n")
					return nil
				},
				Map: func(v int) (int, error) { c.IncBy(int64(v)); return v, nil },
			}
		}).Name("m")
	})
	must(t, err)
	must(t, h.ProcessElement(5, 0))
	must(t, h.ProcessElement(7, 0))
	if seen.IndexOfThisSubtask() != 2 || seen.NumberOfParallelSubtasks() != 4 || seen.MaxNumberOfParallelSubtasks() != 128 ||
		seen.OperatorName() != "m" || seen.AttemptNumber() != 0 {
		t.Fatalf("runtime context %+v", seen)
	}
	if m := metric(t, h, "m.2.io.n"); m.Count != 12 {
		t.Fatalf("counter %d, want 12", m.Count)
	}
	must(t, h.Close())
}

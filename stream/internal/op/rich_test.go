package op

import (
	"errors"
	"testing"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream/internal/core"
)

// collect is an Output keeping what it is pushed.
type collect[T any] struct{ got []core.Record[T] }

func (c *collect[T]) Push(b []core.Record[T]) error {
	c.got = append(c.got, b...)
	return nil
}

// TestRichLifecycle: the rich operators call Open before the records and
// Close once after it, never Close without Open; they map, filter and flat
// map with the records' timestamps; a function's error stops the batch.
func TestRichLifecycle(t *testing.T) {
	var calls []string
	life := Lifecycle{Open: func() error { calls = append(calls, "open"); return nil },
		Close: func() error { calls = append(calls, "close"); return nil }}
	out := &collect[int]{}
	boom := errors.New("boom")
	m := NewRichMap(life, func(v int) (int, error) {
		if v < 0 {
			return 0, boom
		}
		return v * 10, nil
	}, out, 2)
	if err := m.Close(); err != nil || len(calls) != 0 {
		t.Fatalf("Close before Open: %v %v", err, calls)
	}
	if err := m.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Push([]core.Record[int]{{Value: 1, Timestamp: 5}, {Value: 2, Timestamp: 6}, {Value: 3, Timestamp: 7}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Push([]core.Record[int]{{Value: -1}}); !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if err := errors.Join(m.Close(), m.Close()); err != nil {
		t.Fatal(err)
	}
	want := []core.Record[int]{{Value: 10, Timestamp: 5}, {Value: 20, Timestamp: 6}, {Value: 30, Timestamp: 7}}
	if len(out.got) != 3 || out.got[0] != want[0] || out.got[1] != want[1] || out.got[2] != want[2] {
		t.Fatalf("mapped %v, want %v", out.got, want)
	}
	if len(calls) != 2 || calls[0] != "open" || calls[1] != "close" {
		t.Fatalf("calls %v", calls)
	}

	fout := &collect[int]{}
	f := NewRichFilter(Lifecycle{}, func(v int) (bool, error) { return v%2 == 0, nil }, fout, 4)
	if err := errors.Join(f.Open(nil), f.Push([]core.Record[int]{{Value: 1}, {Value: 2, Timestamp: 3}, {Value: 4}}), f.Close()); err != nil {
		t.Fatal(err)
	}
	if len(fout.got) != 2 || fout.got[0] != (core.Record[int]{Value: 2, Timestamp: 3}) || fout.got[1].Value != 4 {
		t.Fatalf("filtered %v", fout.got)
	}

	fmOut := &collect[int]{}
	st := &Ctx{}
	e := core.NewEmitter[int](fmOut, 4)
	fm := NewRichFlatMap(Lifecycle{}, func(v int, c *Collector[int]) error {
		for i := range v {
			c.Collect(i)
		}
		return nil
	}, &Collector[int]{E: e, C: st}, st, e)
	if err := errors.Join(fm.Open(nil), fm.Push([]core.Record[int]{{Value: 2, Timestamp: 9}, {Value: 1, Timestamp: 4}}), fm.Close()); err != nil {
		t.Fatal(err)
	}
	wantFM := []core.Record[int]{{Value: 0, Timestamp: 9}, {Value: 1, Timestamp: 9}, {Value: 0, Timestamp: 4}}
	if len(fmOut.got) != 3 || fmOut.got[0] != wantFM[0] || fmOut.got[1] != wantFM[1] || fmOut.got[2] != wantFM[2] {
		t.Fatalf("flat mapped %v, want %v", fmOut.got, wantFM)
	}
}

// BenchmarkMapMetrics is the cost per record of a user metric updated in
// a Map: batches of 1,024 records through a plain Map, a RichMap, and a
// RichMap that increments a Counter, updates a Histogram or marks a Meter
// per record, into an output that drops them, the metrics published after
// each batch as the task's loop does. The difference between the RichMap
// with a metric and without is the metric's cost (ns/record).
func BenchmarkMapMetrics(b *testing.B) {
	const batch = 1024
	recs := make([]core.Record[int64], batch)
	for i := range recs {
		recs[i] = core.Record[int64]{Value: int64(i), Timestamp: int64(i)}
	}
	g := metrics.NewGroup(nil, "Map", "0")
	c, h, m := g.Counter("c"), g.Histogram("h", 1024), g.Meter("m", 0)
	cases := []struct {
		name string
		op   interface {
			Push([]core.Record[int64]) error
		}
	}{
		{"Map", NewMap(func(v int64) int64 { return v + 1 }, core.Discard[int64]{}, batch)},
		{"RichMap", NewRichMap(Lifecycle{}, func(v int64) (int64, error) { return v + 1, nil }, core.Discard[int64]{}, batch)},
		{"RichMap+Counter.Inc", NewRichMap(Lifecycle{}, func(v int64) (int64, error) { c.Inc(); return v + 1, nil }, core.Discard[int64]{}, batch)},
		{"RichMap+Histogram.Update", NewRichMap(Lifecycle{}, func(v int64) (int64, error) { h.Update(v); return v + 1, nil }, core.Discard[int64]{}, batch)},
		{"RichMap+Meter.MarkEvent", NewRichMap(Lifecycle{}, func(v int64) (int64, error) { m.MarkEvent(); return v + 1, nil }, core.Discard[int64]{}, batch)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := tc.op.Push(recs); err != nil {
					b.Fatal(err)
				}
				g.Publish() // as the task's loop does after each batch
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/record")
		})
	}
}

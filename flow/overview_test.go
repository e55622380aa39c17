package flow

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
)

// TestSnapshot runs a source held after n records per subtask into a sink
// whose body registers two chained operators, under a clock.Manual: the
// snapshot's operator totals are the records sent, the rates are the totals
// over the clock's advance, the watermarks are the last ones set and the
// lag is the clock minus the low watermark; the sink, waiting for input
// while the sources are held, is mostly idle.
func TestSnapshot(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	const n = 1000
	start := time.UnixMilli(1_000_000)
	clk := clock.NewManual(start)
	release := make(chan struct{})
	g := NewGraph()
	src := g.Vertex("src", 2, func(tc *TaskContext) error {
		op := tc.Metrics.Operator("gen")
		out := Output[int64](tc, 0)
		for i := int64(0); i < n; i++ {
			if err := out.Emit(&i); err != nil {
				return err
			}
		}
		op.AddOut(n)
		tc.Metrics.SetWatermark(900_000 + int64(tc.Subtask)*50_000)
		if err := out.Flush(); err != nil {
			return err
		}
		<-release
		return nil
	})
	sink := g.Vertex("sink", 1, func(tc *TaskContext) error {
		a, b := tc.Metrics.Operator("filter"), tc.Metrics.Operator("sink")
		r := Input[int64](tc, 0)
		for {
			batch, err := r.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			a.AddIn(len(batch))
			kept := 0
			for _, v := range batch {
				if v%2 == 0 {
					kept++
				}
			}
			a.AddOut(kept)
			b.AddIn(kept)
			tc.Metrics.SetWatermark(990_000)
		}
	})
	Connect(g, src, sink, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
	jb, err := Start(bg, g, env.options(Options{Clock: clk}))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every record read by the sink", func() bool {
		s := jb.Overview()
		return s.Vertices[1].Operators[0].RecordsIn == 2*n
	})
	time.Sleep(200 * time.Millisecond)
	clk.Advance(2 * time.Second)
	res := env.mgr.NewReservation("test")
	if err := res.Grow(3 << 20); err != nil {
		t.Fatal(err)
	}
	s := jb.Overview()
	if err := res.Release(); err != nil {
		t.Fatal(err)
	}
	if m := s.Memory; m.Budget != 0 || m.Used < 3<<20 || m.Peak < m.Used {
		t.Errorf("managed memory %+v: want no budget and the 3 MiB held", m)
	}
	if s.Window != 2*time.Second || !s.At.Equal(start.Add(2*time.Second)) {
		t.Fatalf("window %v at %v, want 2s at %v", s.Window, s.At, start.Add(2*time.Second))
	}
	want := []OperatorOverview{{Name: "filter", RecordsIn: 2 * n, RecordsOut: n, RecordsInPerSecond: n, RecordsOutPerSecond: n / 2},
		{Name: "sink", RecordsIn: n, RecordsInPerSecond: n / 2}}
	for i, w := range want {
		if got := s.Vertices[1].Operators[i]; got != w {
			t.Errorf("sink operator %d: %+v, want %+v", i, got, w)
		}
	}
	if got := s.Vertices[0].Operators; len(got) != 1 || got[0] != (OperatorOverview{Name: "gen", RecordsOut: 2 * n, RecordsOutPerSecond: n}) {
		t.Errorf("source operators %+v", got)
	}
	if v := s.Vertices[0]; v.Watermark != 900_000 || v.WatermarkLag != 1002*time.Second-900*time.Second {
		t.Errorf("source low watermark %d lag %v, want 900000 and %v", v.Watermark, v.WatermarkLag, 102*time.Second)
	}
	if w := s.Vertices[0].Subtasks[1].Watermark; w != 950_000 {
		t.Errorf("source subtask 1 watermark %d, want 950000", w)
	}
	if v := s.Vertices[1]; v.Watermark != 990_000 || v.WatermarkLag != 12*time.Second {
		t.Errorf("sink watermark %d lag %v, want 990000 and 12s", v.Watermark, v.WatermarkLag)
	}
	if v := s.Vertices[1]; v.Idle < 0.5 || v.Busy+v.Idle+v.Backpressured < 0.999 || v.Busy+v.Idle+v.Backpressured > 1.001 {
		t.Errorf("sink waiting for held sources: busy %.3f idle %.3f backpressured %.3f", v.Busy, v.Idle, v.Backpressured)
	}
	// a second snapshot a second later measures from the first sample on
	clk.Advance(time.Second)
	s = jb.Overview()
	if s.Window != 3*time.Second {
		t.Errorf("second window %v, want 3s (from the job's start, within MetricsWindow)", s.Window)
	}
	clk.Advance(MetricsWindow)
	s = jb.Overview()
	if s.Window != MetricsWindow {
		t.Errorf("window %v after %v more, want %v (from the sample at 3s)", s.Window, MetricsWindow, MetricsWindow)
	}
	if r := s.Vertices[1].Operators[0].RecordsInPerSecond; r != 0 {
		t.Errorf("rate %v over a window without records, want 0", r)
	}
	close(release)
	if _, err := jb.Wait(); err != nil {
		t.Fatal(err)
	}
	s = jb.Overview()
	if v := s.Vertices[1]; v.Ended != 1 || v.Operators[1].RecordsIn != n {
		t.Errorf("after the end: ended %d, sink in %d", v.Ended, v.Operators[1].RecordsIn)
	}
	env.check(t)
}

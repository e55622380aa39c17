package flow

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// probe is a push operator that records its lifecycle calls; it doubles its
// records into next (nil: it sums them) and fails as told.
type probe struct {
	calls     []string
	processed int
	sum       int
	next      Collector[int]
	buf       []int
	openErr   error
	failAt    int // fail the Process call with this many records seen (0: never)
	onProcess func()
}

func (p *probe) Open(*TaskContext) error {
	p.calls = append(p.calls, "open")
	return p.openErr
}

func (p *probe) Process(b []int) error {
	if p.onProcess != nil {
		p.onProcess()
	}
	p.processed += len(b)
	if p.failAt > 0 && p.processed >= p.failAt {
		return errors.New("probe failed")
	}
	if p.next == nil {
		for _, x := range b {
			p.sum += x
		}
		return nil
	}
	p.buf = p.buf[:0]
	for _, x := range b {
		p.buf = append(p.buf, 2*x)
	}
	return p.next.Collect(p.buf)
}

func (p *probe) EndInput() error {
	p.calls = append(p.calls, "end")
	if p.next != nil {
		return p.next.End()
	}
	return nil
}

func (p *probe) Close() error {
	p.calls = append(p.calls, "close")
	return nil
}

// lifecycleJob runs a source of 0..n-1 (batches of 100; forever when n < 0)
// into a task that drives head, which feeds tail, opened and closed with it.
func lifecycleJob(t *testing.T, ctx context.Context, n int, head, tail *probe) error {
	t.Helper()
	env := newTestEnv(t, budgets[0].opts)
	defer env.check(t)
	g := NewGraph()
	src := g.Vertex("src", 1, func(tc *TaskContext) error {
		w := Output[int](tc, 0)
		b := make([]int, 0, 100)
		for i := 0; n < 0 || i < n; i++ {
			b = append(b, i)
			if len(b) == cap(b) || i == n-1 {
				if err := w.EmitBatch(b); err != nil {
					return err
				}
				b = b[:0]
			}
		}
		return nil
	})
	dst := g.Vertex("dst", 1, func(tc *TaskContext) error {
		head.next = Feed[int](tail)
		if err := tail.Open(tc); err != nil {
			return err
		}
		defer tail.Close()
		return Drive[int](tc, 0, head)
	})
	Connect(g, src, dst, Partitioner[int]{Strategy: Forward}, Pipelined, nil)
	_, err := Execute(ctx, g, env.options(Options{}))
	return err
}

// TestDriveLifecycle: Drive opens the head, hands it every batch, calls
// EndInput once and closes it; a chained operator receives the head's
// output and its end. On a failure or a cancellation Close still runs and
// EndInput does not; a failed Open runs neither Process nor Close.
func TestDriveLifecycle(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		head, tail := &probe{}, &probe{}
		if err := lifecycleJob(t, bg, 1000, head, tail); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(head.calls, " "), "open end close"; got != want {
			t.Fatalf("head ran %q, want %q", got, want)
		}
		if got, want := strings.Join(tail.calls, " "), "open end close"; got != want {
			t.Fatalf("tail ran %q, want %q", got, want)
		}
		if want := 2 * (999 * 1000 / 2); tail.sum != want || tail.processed != 1000 {
			t.Fatalf("tail summed %d over %d records, want %d over 1000", tail.sum, tail.processed, want)
		}
	})
	t.Run("process fails", func(t *testing.T) {
		head, tail := &probe{failAt: 500}, &probe{}
		err := lifecycleJob(t, bg, 1000, head, tail)
		if err == nil || !strings.Contains(err.Error(), "probe failed") {
			t.Fatalf("got %v, want the probe's error", err)
		}
		if got, want := strings.Join(head.calls, " "), "open close"; got != want {
			t.Fatalf("head ran %q, want %q", got, want)
		}
		if got, want := strings.Join(tail.calls, " "), "open close"; got != want {
			t.Fatalf("tail ran %q, want %q", got, want)
		}
	})
	t.Run("open fails", func(t *testing.T) {
		head, tail := &probe{openErr: errors.New("no open")}, &probe{}
		err := lifecycleJob(t, bg, 1000, head, tail)
		if err == nil || !strings.Contains(err.Error(), "no open") {
			t.Fatalf("got %v, want the open error", err)
		}
		if got, want := strings.Join(head.calls, " "), "open"; got != want || head.processed != 0 {
			t.Fatalf("head ran %q over %d records, want %q over none", got, head.processed, want)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		head, tail := &probe{onProcess: cancel}, &probe{}
		err := lifecycleJob(t, ctx, -1, head, tail)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if got, want := strings.Join(head.calls, " "), "open close"; got != want {
			t.Fatalf("head ran %q, want %q", got, want)
		}
	})
}

// driverProbe is a Driver whose Run ends as told.
type driverProbe struct {
	Idle
	closed int
	run    func() error
}

func (d *driverProbe) Close() error { d.closed++; return nil }
func (d *driverProbe) Run() error   { return d.run() }

// TestRunDriver: RunDriver closes the driver once whether Run succeeds,
// fails or panics, and returns Run's error.
func TestRunDriver(t *testing.T) {
	for _, c := range []struct {
		name    string
		run     func() error
		wantErr string
	}{
		{"success", func() error { return nil }, ""},
		{"error", func() error { return errors.New("boom") }, "boom"},
		{"panic", func() error { panic("driver") }, "panic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t, budgets[0].opts)
			d := &driverProbe{run: c.run}
			g := NewGraph()
			g.Vertex("v", 1, func(tc *TaskContext) error { return RunDriver(tc, d) })
			_, err := Execute(bg, g, env.options(Options{}))
			env.check(t)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("got %v, want %q", err, c.wantErr)
			}
			if d.closed != 1 {
				t.Fatalf("Close ran %d times, want once", d.closed)
			}
		})
	}
}

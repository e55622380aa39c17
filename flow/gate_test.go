package flow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateHarness is a task whose inputs are scripted: the test puts messages on
// the inputs' channels, as producers would, and polls the task's gate.
type gateHarness struct {
	t   *testing.T
	tc  *TaskContext
	ins []*inbox
	g   *Gate
}

// newGateHarness makes a task with one input per entry of chans, of that many
// channels.
func newGateHarness(t *testing.T, chans ...int) *gateHarness {
	jctx, cancel := context.WithCancelCause(bg)
	t.Cleanup(func() { cancel(nil) })
	h := &gateHarness{t: t, tc: &TaskContext{Vertex: "scripted", Metrics: &TaskMetrics{}, ctx: jctx}}
	for i, n := range chans {
		in := newInbox(n, 64)
		x := &exchange{
			mode: Pipelined, nProd: n, nCons: 1, batchSize: 4,
			inbox: []*inbox{in},
			free:  make(chan rawBatch, 4),
			j:     &job{ctx: jctx, cancel: cancel},
			e:     &edgeBase{name: fmt.Sprint("in", i)},
			ops:   ops[rec]{},
		}
		h.ins = append(h.ins, in)
		h.tc.inputs = append(h.tc.inputs, &Reader[rec]{consumer: consumer{x: x, in: in, tc: h.tc, ended: make([]bool, n), live: n}})
	}
	h.g = h.tc.Gate()
	return h
}

// send puts m on channel p of input i.
func (h *gateHarness) send(i, p int, m message) {
	m.src = p
	m.ev.Source = p
	in := h.ins[i]
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.put(p, m) {
		h.t.Fatalf("channel %d of input %d is full", p, i)
	}
}

// items polls the gate until nothing is ready and returns what it got.
func (h *gateHarness) items() []string {
	var out []string
	for {
		it, ok, err := h.g.Poll()
		if errors.Is(err, io.EOF) {
			return append(out, "EOF")
		}
		if err != nil {
			return append(out, "error")
		}
		if !ok {
			return out
		}
		out = append(out, itemString(h.tc, it))
	}
}

func itemString(tc *TaskContext, it Item) string {
	switch it.Kind {
	case ItemBatch:
		var s []string
		for _, r := range Input[rec](tc, it.Input).Batch() {
			s = append(s, fmt.Sprint(r.Seq))
		}
		return fmt.Sprintf("B%d:%s", it.Input, strings.Join(s, ","))
	case ItemWatermark:
		return fmt.Sprintf("W%d", it.Value)
	case ItemWatermarkStatus:
		if it.Value == StatusIdle {
			return "IDLE"
		}
		return "ACTIVE"
	case ItemBarrier:
		return fmt.Sprintf("Barrier%d", it.Value)
	case ItemEndOfInput:
		return fmt.Sprintf("End%d", it.Input)
	}
	return it.Kind.String()
}

func batchOf(seq ...int64) message {
	b := make([]rec, len(seq))
	for i, s := range seq {
		b[i].Seq = s
	}
	return message{batch: wrap(b)}
}

func ev(k EventKind, v int64) message { return message{ev: Event{Kind: k, Value: v}} }

// TestGateTwoInputWatermarks: a two-input task whose first input has two
// channels. Each input's channels combine as Flink's StatusWatermarkValve,
// the inputs as Flink's AbstractStreamOperator with
// IndexedCombinedWatermarkStatus (see TestValveFlink and
// TestCombinedTwoInputs for the rules); the expected items are worked out
// by hand from those rules.
func TestGateTwoInputWatermarks(t *testing.T) {
	h := newGateHarness(t, 2, 1)
	steps := []struct {
		in, ch int
		m      message
		want   []string
	}{
		{0, 0, ev(Watermark, 5), nil},
		{0, 1, ev(Watermark, 6), nil},            // input 0 at 5, input 1 not yet
		{1, 0, ev(Watermark, 3), []string{"W3"}}, // min(5, 3)
		{1, 0, ev(WatermarkStatus, StatusIdle), []string{"W5"}},
		{0, 0, ev(Watermark, 9), []string{"W6"}}, // input 0: min(9, 6)
		{0, 1, ev(WatermarkStatus, StatusIdle), []string{"W9"}},
		{0, 0, ev(WatermarkStatus, StatusIdle), []string{"IDLE"}}, // every input idle
		{1, 0, ev(WatermarkStatus, StatusActive), []string{"ACTIVE"}},
		{1, 0, ev(Watermark, 12), []string{"W12"}}, // input 0 idle: input 1 alone
		{0, 0, ev(EndOfPartition, 0), nil},
		{0, 1, ev(EndOfPartition, 0), []string{"End0"}},
		{1, 0, batchOf(1, 2), []string{"B1:1,2"}},
		{1, 0, ev(Watermark, 20), []string{"W20"}},
		{1, 0, ev(EndOfPartition, 0), []string{"End1", "EOF"}},
	}
	for i, s := range steps {
		h.send(s.in, s.ch, s.m)
		if got := h.items(); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: got %v, want %v", i, got, s.want)
		}
	}
	if h.g.Watermark() != 20 {
		t.Fatalf("watermark %d", h.g.Watermark())
	}
}

// TestGateBarrierBlocksChannel: a channel that delivered a barrier is not
// read until every other channel of every input delivered it or ended.
func TestGateBarrierBlocksChannel(t *testing.T) {
	h := newGateHarness(t, 2, 1)
	h.send(0, 0, batchOf(1))
	h.send(0, 0, ev(Barrier, 1))
	h.send(0, 0, batchOf(2))
	h.send(0, 1, batchOf(3))
	h.send(1, 0, batchOf(4))
	if got, want := h.items(), []string{"B0:1", "B1:4", "B0:3"}; !slices.Equal(got, want) {
		t.Fatalf("before alignment: got %v, want %v", got, want)
	}
	h.send(1, 0, ev(Barrier, 1))
	h.send(1, 0, batchOf(5))
	if got := h.items(); len(got) != 0 {
		t.Fatalf("channel 1 of input 0 has not delivered the barrier, got %v", got)
	}
	h.send(0, 1, ev(EndOfPartition, 0)) // an ended channel counts as aligned
	if got, want := h.items(), []string{"Barrier1", "B0:2", "B1:5"}; !slices.Equal(got, want) {
		t.Fatalf("after alignment: got %v, want %v", got, want)
	}
	h.send(0, 0, ev(Barrier, 2))
	h.send(1, 0, ev(Barrier, 3))
	if got := h.items(); !slices.Equal(got, []string{"error"}) {
		t.Fatalf("barriers 2 and 3 aligned: %v", got)
	}
}

// TestGateBarrierAlignment: two inputs from producers of parallelism 3 and
// 2 into a two-input task of parallelism 2. Every producer emits phases of
// records (Seq = the phase) separated by barriers 1..phases-1, at different
// speeds; producer 2 of the first input ends after phase 1 (an end of
// partition in the middle of the alignments). The task reads through its
// gate, waiting on Ready in a select with a ticker, and checks every record
// belongs to the phase the barriers say; its counts per consumer, input and
// phase equal the oracle's.
func TestGateBarrierAlignment(t *testing.T) {
	const nA, nB, nCons, phases = 3, 2, 2, 5
	r := rand.New(rand.NewPCG(7, 7))
	type key struct{ cons, input, phase int }
	want := map[key]int{}
	gen := func(input, n int) [][][]rec {
		out := make([][][]rec, n)
		for p := range out {
			out[p] = make([][]rec, phases)
			for ph := range out[p] {
				if input == 0 && p == 2 && ph > 1 {
					continue // ends after phase 1
				}
				for range 1 + r.IntN(300*(p+1)) {
					k := r.Int64N(1000)
					out[p][ph] = append(out[p][ph], rec{Key: k, Prod: int32(p), Seq: int64(ph)})
					c := int((hashKey(&rec{Key: k}) >> 32) * nCons >> 32)
					want[key{c, input, ph}]++
				}
			}
		}
		return out
	}
	inA, inB := gen(0, nA), gen(1, nB)
	producer := func(input [][][]rec) func(tc *TaskContext) error {
		return func(tc *TaskContext) error {
			w := Output[rec](tc, 0)
			for ph, recs := range input[tc.Subtask] {
				if ph > 0 {
					if recs == nil {
						return nil
					}
					if err := w.Event(Event{Kind: Barrier, Value: int64(ph)}); err != nil {
						return err
					}
				}
				if err := w.EmitBatch(recs); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var mu sync.Mutex
	got := map[key]int{}
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	a := g.Vertex("a", nA, producer(inA))
	b := g.Vertex("b", nB, producer(inB))
	op := g.Vertex("op", nCons, func(tc *TaskContext) error {
		gate := tc.Gate()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		phase, ended := 0, 0
		for {
			it, ok, err := gate.Poll()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if !ok {
				select {
				case <-gate.Ready():
				case <-tick.C:
				case <-tc.Context().Done():
					return tc.Context().Err()
				}
				continue
			}
			switch it.Kind {
			case ItemBatch:
				b := Input[rec](tc, it.Input).Batch()
				for _, r := range b {
					if r.Seq != int64(phase) {
						return fmt.Errorf("input %d: record of phase %d in phase %d", it.Input, r.Seq, phase)
					}
				}
				mu.Lock()
				got[key{tc.Subtask, it.Input, phase}] += len(b)
				mu.Unlock()
			case ItemBarrier:
				if it.Value != int64(phase+1) {
					return fmt.Errorf("barrier %d in phase %d", it.Value, phase)
				}
				phase++
			case ItemEndOfInput:
				ended++
			default:
				return fmt.Errorf("unexpected item %+v", it)
			}
		}
		if phase != phases-1 || ended != 2 {
			return fmt.Errorf("ended in phase %d with %d inputs ended", phase, ended)
		}
		return nil
	})
	Connect(g, a, op, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Pipelined, nil)
	Connect(g, b, op, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Pipelined, nil)
	within(t, 20*time.Second, func() {
		if _, err := Execute(bg, g, env.options(Options{BatchSize: 16, ChannelBuffers: 1})); err != nil {
			t.Error(err)
		}
	})
	env.check(t)
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%+v: got %d records, want %d", k, got[k], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d (consumer, input, phase) counts, want %d", len(got), len(want))
	}
}

// gateTransferGraph is transferGraph with a consumer that reads through its
// gate.
func gateTransferGraph(n int, sum *int64) *Graph {
	g := NewGraph()
	src := g.Vertex("source", 1, func(tc *TaskContext) error {
		w := Output[int64](tc, 0)
		var v int64
		for i := int64(0); i < int64(n); i++ {
			v = i
			if err := w.Emit(&v); err != nil {
				return err
			}
		}
		return nil
	})
	dst := g.Vertex("sink", 1, func(tc *TaskContext) error {
		gate := tc.Gate()
		r := Input[int64](tc, 0)
		for {
			it, err := gate.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if it.Kind == ItemBatch {
				for _, v := range r.Batch() {
					*sum += v
				}
			}
		}
	})
	Connect(g, src, dst, Partitioner[int64]{Strategy: Hash, Hash: func(v *int64) uint64 { return uint64(*v) * 0x9e3779b97f4a7c15 }}, Pipelined, nil)
	return g
}

// TestGateSteadyStateAllocs: reading through a gate allocates nothing per
// batch, as TestSteadyStateAllocs checks for Readers.
func TestGateSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	env := newTestEnv(t, budgets[0].opts)
	opts := env.options(Options{BatchSize: 256, BufferTimeout: -1})
	run := func(n int) float64 {
		return testing.AllocsPerRun(5, func() {
			var sum int64
			if _, err := Execute(bg, gateTransferGraph(n, &sum), opts); err != nil {
				t.Fatal(err)
			}
			if want := int64(n) * int64(n-1) / 2; sum != want {
				t.Fatalf("sum %d, want %d", sum, want)
			}
		})
	}
	small, large := run(1<<12), run(1<<18)
	perBatch := (large - small) / (float64(1<<18-1<<12) / 256)
	if perBatch > 0.1 {
		t.Fatalf("%.3f allocations per batch in the steady state", perBatch)
	}
	env.check(t)
}

// TestGateStatusThroughGraph: producers send watermarks and statuses through
// a real exchange; the consumer's gate turns idle once every producer is
// idle and active again with the first that resumes; an invalid status is
// refused by the writer.
func TestGateStatusThroughGraph(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	idleAll := make(chan struct{})
	var once sync.Once
	g := NewGraph()
	src := g.Vertex("source", 2, func(tc *TaskContext) error {
		w := Output[rec](tc, 0)
		if err := w.Event(Event{Kind: WatermarkStatus, Value: 7}); err == nil {
			return errors.New("status 7 accepted")
		}
		for _, e := range []Event{{Kind: Watermark, Value: int64(10 + tc.Subtask)}, {Kind: WatermarkStatus, Value: StatusIdle}} {
			if err := w.Event(e); err != nil {
				return err
			}
		}
		if tc.Subtask == 1 {
			<-idleAll
			for _, e := range []Event{{Kind: WatermarkStatus, Value: StatusActive}, {Kind: Watermark, Value: 30}} {
				if err := w.Event(e); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var got []string
	dst := g.Vertex("sink", 1, func(tc *TaskContext) error {
		gate := tc.Gate()
		for {
			it, err := gate.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			got = append(got, itemString(tc, it))
			if it.Kind == ItemWatermarkStatus && it.Value == StatusIdle {
				once.Do(func() { close(idleAll) })
			}
		}
	})
	Connect(g, src, dst, Partitioner[rec]{Strategy: Rebalance}, Pipelined, nil)
	within(t, 10*time.Second, func() {
		if _, err := Execute(bg, g, env.options(Options{})); err != nil {
			t.Error(err)
		}
	})
	env.check(t)
	// Worked out from the valve's rules: W10 when both watermarks arrived
	// before producer 0 turned idle (else the first is W11); the last channel
	// to turn idle held the minimum, so the maximum (11) is flushed before
	// IDLE; producer 1 resumes at 11 (caught up) and advances to 30; if it
	// ends before producer 0, the input is idle again (producer 0 is).
	want := []string{"W11", "IDLE", "ACTIVE", "W30", "End0"}
	if len(got) > 0 && got[0] == "W10" {
		got = got[1:]
	}
	if len(got) == 6 && got[4] == "IDLE" {
		got = slices.Delete(got, 4, 5)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v with an optional W10 first and IDLE before End0", got, want)
	}
}

// TestGateOneInputIsValve: for a one-input task the gate's watermarks and
// statuses are exactly what a valve fed the same channel events emits (the
// combination over one input passes them through), batches in between.
func TestGateOneInputIsValve(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		n := 1 + r.IntN(4)
		h := newGateHarness(t, n)
		v := newValve(n)
		ended := make([]bool, n)
		live := n
		for step := 0; live > 0 && step < 300; step++ {
			c := r.IntN(n)
			if ended[c] {
				continue
			}
			var m message
			var want []string
			switch x := r.IntN(20); {
			case x == 0:
				m = ev(EndOfPartition, 0)
				if s := v.end(c).String(); s != "" {
					want = strings.Fields(s)
				}
				ended[c] = true
				live--
				if live == 0 {
					want = append(want, "End0", "EOF")
				}
			case x < 4:
				m = ev(WatermarkStatus, StatusIdle)
				want = strings.Fields(v.status(c, true).String())
			case x < 7:
				m = ev(WatermarkStatus, StatusActive)
				want = strings.Fields(v.status(c, false).String())
			case x < 10:
				m = batchOf(int64(step))
				want = []string{fmt.Sprintf("B0:%d", step)}
			default:
				w := r.Int64N(100) + int64(step)
				m = ev(Watermark, w)
				want = strings.Fields(v.watermark(c, w).String())
			}
			h.send(0, c, m)
			if got := h.items(); !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d channel %d: got %v, want %v", seed, step, c, got, want)
			}
		}
	}
}

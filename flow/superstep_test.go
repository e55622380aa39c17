package flow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSupersteps: producers send three supersteps of records, each ended by
// an EndOfSuperstep event; a consumer in superstep mode reads each superstep
// "until EOF" (ErrEndOfSuperstep), and io.EOF once the producers ended. Every
// superstep holds exactly the records sent in it, at every batch size and
// with several producers (aligned).
func TestSupersteps(t *testing.T) {
	const steps, perStep = 3, 500
	for _, bs := range []int{1, 7, 1024} {
		for _, producers := range []int{1, 3} {
			t.Run(fmt.Sprintf("batch%d/producers%d", bs, producers), func(t *testing.T) {
				env := newTestEnv(t, budgets[0].opts)
				g := NewGraph()
				src := g.Vertex("head", producers, func(tc *TaskContext) error {
					w := Output[rec](tc, 0)
					for s := 1; s <= steps; s++ {
						for i := tc.Subtask; i < perStep; i += tc.Parallelism {
							r := rec{Key: int64(s), Seq: int64(i)}
							if err := w.Emit(&r); err != nil {
								return err
							}
						}
						if err := w.Event(Event{Kind: EndOfSuperstep, Value: int64(s)}); err != nil {
							return err
						}
					}
					return nil
				})
				var got [][]int64
				dst := g.Vertex("body", 1, func(tc *TaskContext) error {
					in := Input[rec](tc, 0)
					if err := in.Supersteps(); err != nil {
						return err
					}
					var cur []int64
					for {
						b, err := in.Next(tc.Context())
						switch {
						case errors.Is(err, ErrEndOfSuperstep):
							if _, err := in.Next(tc.Context()); !errors.Is(err, ErrEndOfSuperstep) {
								return fmt.Errorf("after the end of a superstep: %v", err)
							}
							got = append(got, cur)
							cur = nil
							in.NextSuperstep()
							continue
						case errors.Is(err, io.EOF):
							if len(cur) > 0 {
								return fmt.Errorf("records after the last superstep: %v", cur)
							}
							return nil
						case err != nil:
							return err
						}
						for _, r := range b {
							cur = append(cur, r.Key*1e6+r.Seq)
						}
					}
				})
				Connect(g, src, dst, Partitioner[rec]{Strategy: Rebalance}, Pipelined, nil)
				if _, err := Execute(bg, g, env.options(Options{BatchSize: bs})); err != nil {
					t.Fatal(err)
				}
				if len(got) != steps {
					t.Fatalf("got %d supersteps, want %d", len(got), steps)
				}
				for s, recs := range got {
					slices.Sort(recs)
					if len(recs) != perStep {
						t.Fatalf("superstep %d: %d records, want %d", s+1, len(recs), perStep)
					}
					for i, v := range recs {
						if want := int64(s+1)*1e6 + int64(i); v != want {
							t.Fatalf("superstep %d: record %d is %d, want %d", s+1, i, v, want)
						}
					}
				}
			})
		}
	}
}

// iterationJob builds an iteration as a graph: a head (2 subtasks) emits in
// superstep s the records s*1000+i for i < perStep, split between its
// subtasks, then ends the superstep; a body (3 subtasks) reads each
// superstep and adds up what it read; a result vertex (1 subtask) waits for
// the iteration's end. Head and body subtasks are the barrier's parties
// (0-1 and 2-4); all six tasks are its users. decide checks the superstep's
// sum against the closed form and stops after steps supersteps. failAt, if
// positive, makes body subtask 1 fail in that superstep.
type iterationJob struct {
	steps, perStep, failAt int

	it                 *Iteration
	sums               []atomic.Int64 // per superstep
	decided, wrongSums atomic.Int32
	stepSeen           []int // per head subtask: the last Superstep() seen
	exitsPerStep       atomic.Int32
	kept               atomic.Int32 // body subtasks that found their kept value every superstep
	released, freed    atomic.Int32
	freedAfter         atomic.Int32 // Exit calls before the storage was freed
	exits              atomic.Int32
	resultStep         int
}

func (j *iterationJob) graph() *Graph {
	j.sums = make([]atomic.Int64, j.steps+2)
	j.stepSeen = make([]int, 2)
	j.it = NewIteration(5, 6, func(_ context.Context, step int) (bool, error) {
		j.decided.Add(1)
		n := int64(j.perStep)
		if j.sums[step].Load() != int64(step)*1000*n+n*(n-1)/2 {
			j.wrongSums.Add(1)
		}
		return step < j.steps, nil
	})
	exit := func(tc *TaskContext) {
		tc.OnEnd(func() {
			j.exits.Add(1)
			j.it.Exit()
		})
	}
	g := NewGraph()
	head := g.Vertex("head", 2, func(tc *TaskContext) error {
		exit(tc)
		w := Output[int64](tc, 0)
		return j.it.Run(tc, tc.Subtask, nil, func(step int) error {
			j.stepSeen[tc.Subtask] = j.it.Superstep()
			for i := tc.Subtask; i < j.perStep; i += tc.Parallelism {
				v := int64(step*1000 + i)
				if err := w.Emit(&v); err != nil {
					return err
				}
			}
			return w.Event(Event{Kind: EndOfSuperstep, Value: int64(step)})
		})
	})
	body := g.Vertex("body", 3, func(tc *TaskContext) error {
		exit(tc)
		in := Input[int64](tc, 0)
		keptEvery := true
		tc.OnEnd(func() {
			if keptEvery {
				j.kept.Add(1)
			}
		})
		return j.it.Run(tc, 2+tc.Subtask, []int{0}, func(step int) error {
			if step == 1 {
				j.it.Hold(func() {
					j.freedAfter.Store(j.exits.Load())
					j.freed.Add(1)
				})
				tc.Keep("count", new(int), func() { j.released.Add(1) })
				tc.Keep("dropped", 1, func() { j.released.Add(1) })
			}
			switch {
			case step == 2:
				tc.Drop("dropped")
			case step > 2 && tc.Kept("dropped") != nil:
				keptEvery = false
			}
			if c, ok := tc.Kept("count").(*int); !ok || *c != step-1 {
				keptEvery = false
			} else {
				*c = step
			}
			tc.OnExit(func() { j.exitsPerStep.Add(1) })
			if j.failAt == step && tc.Subtask == 1 {
				return errors.New("body failed")
			}
			// read only part of the superstep: Run drains the rest
			var sum int64
			for {
				b, err := in.Next(tc.Context())
				if errors.Is(err, ErrEndOfSuperstep) {
					break
				}
				if err != nil {
					return err
				}
				for _, v := range b {
					sum += v
				}
			}
			j.sums[step].Add(sum)
			return nil
		})
	})
	g.Vertex("result", 1, func(tc *TaskContext) error {
		exit(tc)
		if err := j.it.Wait(tc.Context()); err != nil {
			return err
		}
		j.resultStep = j.it.Superstep()
		return nil
	})
	Connect(g, head, body, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
	return g
}

// TestIteration runs iterationJob: every superstep's sum is complete when
// decide runs, decide runs once per superstep, kept values last across
// supersteps (until dropped) and are released once each, OnExit functions run every
// superstep, and the iteration's storage is freed once, after every user
// ended.
func TestIteration(t *testing.T) {
	for _, bs := range []int{1, 64} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			env := newTestEnv(t, budgets[0].opts)
			j := &iterationJob{steps: 5, perStep: 300}
			if _, err := Execute(bg, j.graph(), env.options(Options{BatchSize: bs})); err != nil {
				t.Fatal(err)
			}
			env.check(t)
			if j.decided.Load() != 5 || j.wrongSums.Load() != 0 {
				t.Fatalf("decided %d supersteps (want 5), %d with a wrong sum", j.decided.Load(), j.wrongSums.Load())
			}
			if j.stepSeen[0] != 5 || j.stepSeen[1] != 5 || j.resultStep != 5 {
				t.Fatalf("Superstep() seen %v by the head, %d by the result; want 5", j.stepSeen, j.resultStep)
			}
			if j.kept.Load() != 3 || j.released.Load() != 6 {
				t.Fatalf("%d body subtasks kept their values, %d released; want 3, 6", j.kept.Load(), j.released.Load())
			}
			if j.exitsPerStep.Load() != 3*5 {
				t.Fatalf("OnExit ran %d times, want 15", j.exitsPerStep.Load())
			}
			if j.freed.Load() != 3 || j.freedAfter.Load() != 6 {
				t.Fatalf("storage freed %d times (want 3) after %d exits (want 6)", j.freed.Load(), j.freedAfter.Load())
			}
		})
	}
}

// TestIterationFailure: a body subtask fails in superstep 2: Execute returns
// its error, the other parties and the result task are released, the
// superstep is not decided, and what was kept and held is released.
func TestIterationFailure(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	j := &iterationJob{steps: 5, perStep: 300, failAt: 2}
	_, err := Execute(bg, j.graph(), env.options(Options{}))
	if err == nil || !strings.Contains(err.Error(), `vertex "body" subtask 2/3: body failed`) {
		t.Fatalf("got %v, want body subtask 2's failure", err)
	}
	env.check(t)
	if j.decided.Load() != 1 {
		t.Fatalf("decided %d supersteps, want 1", j.decided.Load())
	}
	if j.released.Load() != 6 || j.freed.Load() != 3 {
		t.Fatalf("released %d kept values and freed %d held, want 6 and 3", j.released.Load(), j.freed.Load())
	}
}

// TestIterationDecideError: an error of the decide hook fails every party
// and the result task with it.
func TestIterationDecideError(t *testing.T) {
	boom := errors.New("boom")
	it := NewIteration(2, 3, func(_ context.Context, step int) (bool, error) {
		if step == 2 {
			return false, boom
		}
		return true, nil
	})
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for p := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, errs[p] = it.Await(bg, p); errs[p] != nil {
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); errs[2] = it.Wait(bg) }()
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Fatalf("task %d: %v, want boom", i, err)
		}
	}
	if it.Superstep() != 2 {
		t.Fatalf("Superstep() = %d, want 2", it.Superstep())
	}
}

package flow

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRoundsRounds: many parties in goroutines run rounds; before each
// arrival a party adds its number to the round's sum. decide must run once per
// round, after every party arrived (the sum is complete), and every party gets
// that round's decision.
func TestRoundsRounds(t *testing.T) {
	const rounds = 50
	for _, n := range []int{1, 2, 7, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var sums [rounds + 1]atomic.Int64
			var calls [rounds + 1]atomic.Int32
			var bad atomic.Int32
			want := int64(n * (n - 1) / 2)
			c := newRounds(n, func(_ context.Context, round int) (int, error) {
				calls[round].Add(1)
				if sums[round].Load() != want {
					bad.Add(1)
				}
				return round * 1000, nil
			})
			var wg sync.WaitGroup
			errs := make([]error, n)
			for p := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 1; r <= rounds; r++ {
						sums[r].Add(int64(p))
						d, err := c.Await(bg, p)
						if err != nil {
							errs[p] = err
							return
						}
						if d != r*1000 {
							errs[p] = fmt.Errorf("party %d round %d: decision %d, want %d", p, r, d, r*1000)
							return
						}
						// every party saw round r decided before working on r+1
						if calls[r].Load() != 1 {
							errs[p] = fmt.Errorf("party %d round %d: decide ran %d times", p, r, calls[r].Load())
							return
						}
					}
					c.Leave(bg, p)
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if bad.Load() != 0 {
				t.Fatalf("decide ran %d times before every party arrived", bad.Load())
			}
			for r := 1; r <= rounds; r++ {
				if calls[r].Load() != 1 {
					t.Fatalf("round %d decided %d times", r, calls[r].Load())
				}
			}
			if c.Decided() != rounds {
				t.Fatalf("Decided() = %d, want %d", c.Decided(), rounds)
			}
		})
	}
}

// TestRoundsLeave: party p leaves after round p+1 (the last one stays
// to the end); a round counts only the parties still there. Parties run in
// goroutines with random orders of arrival and leaving.
func TestRoundsLeave(t *testing.T) {
	const n = 16
	for seed := range int64(20) {
		rounds := make([]int, n) // rounds party p takes part in
		rng := rand.New(rand.NewSource(seed))
		last := 0
		for p := range rounds {
			rounds[p] = 1 + rng.Intn(n)
			last = max(last, rounds[p])
		}
		var arrived [n + 2]atomic.Int32
		var calls [n + 2]atomic.Int32
		var bad atomic.Int32
		c := newRounds(n, func(_ context.Context, round int) (int, error) {
			calls[round].Add(1)
			want := int32(0)
			for _, k := range rounds {
				if k >= round {
					want++
				}
			}
			if arrived[round].Load() != want {
				bad.Add(1)
			}
			return round, nil
		})
		var wg sync.WaitGroup
		errs := make([]error, n)
		for p := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 1; r <= rounds[p]; r++ {
					arrived[r].Add(1)
					if d, err := c.Await(bg, p); err != nil || d != r {
						errs[p] = fmt.Errorf("party %d round %d: %d, %v", p, r, d, err)
						return
					}
				}
				c.Leave(bg, p)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if bad.Load() != 0 {
			t.Fatalf("seed %d: %d rounds decided with a wrong number of arrivals", seed, bad.Load())
		}
		for r := 1; r <= n+1; r++ {
			want := int32(0)
			if r <= last {
				want = 1
			}
			if calls[r].Load() != want {
				t.Fatalf("seed %d: round %d decided %d times, want %d", seed, r, calls[r].Load(), want)
			}
		}
	}
}

// TestRoundsLeaveCompletes: the others all arrived; the last party's
// Leave completes the round, in its own call.
func TestRoundsLeaveCompletes(t *testing.T) {
	calls := 0
	c := newRounds(3, func(_ context.Context, round int) (string, error) {
		calls++
		return fmt.Sprint("round ", round), nil
	})
	r0, r1 := c.Arrive(bg, 0), c.Arrive(bg, 1)
	if c.Decided() != 0 || calls != 0 {
		t.Fatalf("decided before every party arrived")
	}
	c.Leave(bg, 2)
	if c.Decided() != 1 || calls != 1 {
		t.Fatalf("Leave did not complete the round: decided %d, calls %d", c.Decided(), calls)
	}
	for _, r := range []*Round[string]{r0, r1} {
		if d, err := r.Wait(bg); err != nil || d != "round 1" {
			t.Fatalf("got %q, %v", d, err)
		}
	}
	c.Leave(bg, 2) // twice: harmless
	if _, err := c.Await(bg, 2); err == nil {
		t.Fatal("a party that left could arrive")
	}
	if _, err := c.Await(bg, 3); err == nil {
		t.Fatal("party 3 of 3 could arrive")
	}
	// everyone leaving without arriving decides nothing
	c.Leave(bg, 0)
	c.Leave(bg, 1)
	if c.Decided() != 1 || calls != 1 {
		t.Fatalf("a round nobody arrived at was decided")
	}
}

// TestRoundsOverlap: arrivals run ahead of the decisions, as a
// checkpoint's acknowledgements do: party 0 acknowledges rounds 1-3 before
// party 1 acknowledges any; rounds are decided in order, each once, as soon
// as party 1 reaches it.
func TestRoundsOverlap(t *testing.T) {
	var order []int
	c := newRounds(2, func(_ context.Context, round int) (int, error) {
		order = append(order, round)
		return -round, nil
	})
	var ahead []*Round[int]
	for range 3 {
		ahead = append(ahead, c.Arrive(bg, 0))
	}
	for i, r := range ahead {
		if r.Number() != i+1 {
			t.Fatalf("arrival %d is at round %d", i+1, r.Number())
		}
		select {
		case <-r.Done():
			t.Fatalf("round %d decided before party 1 arrived", i+1)
		default:
		}
	}
	for k := 1; k <= 3; k++ {
		d, err := c.Await(bg, 1)
		if err != nil || d != -k {
			t.Fatalf("party 1 round %d: %d, %v", k, d, err)
		}
		if d, err := ahead[k-1].Wait(bg); err != nil || d != -k {
			t.Fatalf("party 0 round %d: %d, %v", k, d, err)
		}
		if c.Decided() != k {
			t.Fatalf("decided %d rounds, want %d", c.Decided(), k)
		}
	}
	if fmt.Sprint(order) != "[1 2 3]" {
		t.Fatalf("decided rounds %v, want [1 2 3]", order)
	}
}

// TestRoundsDecideError: decide fails at round 3; every party gets the
// error, later arrivals get it at once, and decide runs no more.
func TestRoundsDecideError(t *testing.T) {
	const n = 8
	boom := errors.New("boom")
	var calls atomic.Int32
	c := newRounds(n, func(_ context.Context, round int) (bool, error) {
		calls.Add(1)
		if round == 3 {
			return false, boom
		}
		return true, nil
	})
	var wg sync.WaitGroup
	failedAt := make([]int, n)
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 1; ; r++ {
				if _, err := c.Await(bg, p); err != nil {
					if !errors.Is(err, boom) {
						t.Errorf("party %d: %v, want boom", p, err)
					}
					failedAt[p] = r
					return
				}
			}
		}()
	}
	wg.Wait()
	for p, r := range failedAt {
		if r != 3 {
			t.Fatalf("party %d failed at round %d, want 3", p, r)
		}
	}
	if _, err := c.Await(bg, 0); !errors.Is(err, boom) {
		t.Fatalf("arrival after the failure: %v", err)
	}
	if calls.Load() != 3 || !errors.Is(c.Err(), boom) {
		t.Fatalf("calls %d, Err %v", calls.Load(), c.Err())
	}
	select {
	case <-c.Failed():
	default:
		t.Fatal("Failed not closed")
	}
}

// TestRoundsCancel: one party's context ends while it waits; every
// waiting party is released with the context's error.
func TestRoundsCancel(t *testing.T) {
	const n = 10
	c := newRounds(n+1, func(context.Context, int) (int, error) {
		t.Error("decide ran though a party never arrived")
		return 0, nil
	})
	ctx, cancel := context.WithCancel(bg)
	var wg sync.WaitGroup
	errs := make([]error, n)
	var waiting sync.WaitGroup
	waiting.Add(n)
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx := bg
			if p == 0 {
				pctx = ctx
			}
			r := c.Arrive(pctx, p)
			waiting.Done()
			_, errs[p] = r.Wait(pctx)
		}()
	}
	waiting.Wait()
	cancel()
	wg.Wait()
	for p, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("party %d: %v, want context.Canceled", p, err)
		}
	}
	if _, err := c.Await(bg, n); !errors.Is(err, context.Canceled) {
		t.Fatalf("the last party: %v", err)
	}
}

// TestRoundsFail: Fail releases every waiting party with its error;
// only the first failure counts.
func TestRoundsFail(t *testing.T) {
	const n = 6
	first, second := errors.New("first"), errors.New("second")
	c := newRounds(n, func(context.Context, int) (int, error) { return 1, nil })
	rounds := make([]*Round[int], n-1)
	for p := range n - 1 {
		rounds[p] = c.Arrive(bg, p)
	}
	c.Fail(first)
	c.Fail(second)
	for p, r := range rounds {
		if _, err := r.Wait(bg); !errors.Is(err, first) {
			t.Fatalf("party %d: %v, want first", p, err)
		}
	}
	c.Leave(bg, n-1) // would have completed the round: nothing is decided
	if c.Decided() != 0 {
		t.Fatalf("decided %d rounds after a failure", c.Decided())
	}
}

// TestRoundsPanic: a panicking decide fails the rounds, then
// propagates to the goroutine that ran it.
func TestRoundsPanic(t *testing.T) {
	c := newRounds(2, func(context.Context, int) (int, error) { panic("decide") })
	r := c.Arrive(bg, 0)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not propagate")
			}
		}()
		c.Arrive(bg, 1)
	}()
	if _, err := r.Wait(bg); err == nil {
		t.Fatal("the waiting party got no error")
	}
	if c.Err() == nil {
		t.Fatal("the rounds did not fail")
	}
}

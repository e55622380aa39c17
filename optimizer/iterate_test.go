package optimizer

import (
	"strings"
	"testing"
)

// loopJoin builds, at parallelism 4, a join inside an iteration's step of
// iters supersteps: input 0 is the dynamic side (a head of dyn rows that
// runs every superstep), input 1 a static side of static rows computed
// outside the loop (marked Static when cached).
func loopJoin(dyn, static int64, iters int, cached bool) (*builder, *Node) {
	b := newBuilder(4)
	init := b.source("initial", dyn)
	st := b.source("static", static)
	head := b.add(MapPartition, "head", init)
	head.Iterations, head.Static = iters, []bool{true}
	j := b.join("step join", head, st, "int64", "k")
	j.Iterations = iters
	if cached {
		j.Static = []bool{false, true}
	}
	tail := b.sink(j)
	tail.Iterations = iters
	return b, j
}

// TestIterationsFlipTheJoinStrategy: a small dynamic side (10K rows) against
// a large static one (1M rows), neither partitioned. Run once, broadcasting
// the dynamic side (4 × 10K rows) beats hashing both (1M + 10K); run 50
// times, the broadcast costs 50 × 4 × 10K rows while hashing ships the
// static side once and the dynamic side each superstep (1M + 50 × 10K).
func TestIterationsFlipTheJoinStrategy(t *testing.T) {
	const dyn, static = 10_000, 1_000_000
	rowBytes := float64(DefaultRowBytes)
	for _, c := range []struct {
		iters   int
		ship    [2]Ship
		network float64
	}{
		{1, [2]Ship{Broadcast, Forward}, 4 * dyn * rowBytes},
		{50, [2]Ship{Hash, Hash}, static*rowBytes + 50*dyn*rowBytes},
	} {
		b, j := loopJoin(dyn, static, c.iters, true)
		b.plan(t)
		d := j.Decision
		if [2]Ship(d.Ship) != c.ship || d.Local != HybridHashBuildSecond {
			t.Errorf("iterations=%d: ships %v builds %s, want %v building on the static input\n%s", c.iters, d.Ship, d.Local, c.ship, b.p.Explain())
		}
		if d.Cost.Network != c.network {
			t.Errorf("iterations=%d: join network cost %g, want %g", c.iters, d.Cost.Network, c.network)
		}
		notes := strings.Join(d.Notes, "; ")
		if !strings.Contains(notes, "static input 1 cached: shipped and built once") {
			t.Errorf("iterations=%d: notes %q do not say the static input is built once", c.iters, notes)
		}
		if c.iters > 1 && !strings.Contains(notes, "×50 supersteps") {
			t.Errorf("iterations=%d: notes %q do not give the supersteps", c.iters, notes)
		}
	}
	// Without knowing the static side the planner would pay it every
	// superstep: the cheapest plan then costs more than the one above.
	b, j := loopJoin(dyn, static, 50, false)
	b.plan(t)
	if j.Decision.Cost.Network <= static*rowBytes+50*dyn*rowBytes {
		t.Errorf("a join unaware of its static input costs %g, no more than the cached plan", j.Decision.Cost.Network)
	}
}

// TestIterationsMultiplyPerSuperstepCosts: a step's operator costs its cost
// per superstep times Iterations; outside loops (0 or 1) it is unchanged.
func TestIterationsMultiplyPerSuperstepCosts(t *testing.T) {
	cost := func(iters int) Costs {
		b := newBuilder(4)
		src := b.source("s", 100_000)
		g := b.group("g", src, "k")
		g.Iterations = iters
		b.sink(g)
		b.plan(t)
		return g.Decision.Cost
	}
	one, zero, ten := cost(1), cost(0), cost(10)
	if one != zero {
		t.Errorf("Iterations 1 costs %+v, 0 costs %+v: want equal", one, zero)
	}
	if want := (Costs{Network: 10 * one.Network, Disk: 10 * one.Disk, CPU: 10 * one.CPU}); ten != want || one.Network == 0 {
		t.Errorf("Iterations 10 costs %+v, want 10 × %+v", ten, one)
	}
}

// TestStaticJoinHonoursHintShipsBuildsOnStatic: a hint fixes the ship
// strategies of a join with a cached static input; it still builds on the
// static input, which the runtime keeps as its hash table.
func TestStaticJoinHonoursHintShipsBuildsOnStatic(t *testing.T) {
	b, j := loopJoin(10, 1_000_000, 5, true)
	j.JoinHint = BroadcastHashFirst
	b.plan(t)
	if d := j.Decision; [2]Ship(d.Ship) != [2]Ship{Broadcast, Forward} || d.Local != HybridHashBuildSecond {
		t.Errorf("ships %v builds %s, want [BROADCAST FORWARD] building on input 1", d.Ship, d.Local)
	}
	if notes := strings.Join(j.Decision.Notes, "; "); !strings.Contains(notes, "built on static input 1") {
		t.Errorf("notes %q do not say the hint's table is the static input", notes)
	}
}

// TestSizeOfEstimatesLoopResult: a source with SizeOf (an iteration's
// result) is estimated as that node, unless its rows are declared.
func TestSizeOfEstimatesLoopResult(t *testing.T) {
	b := newBuilder(2)
	init := b.source("initial", 12_345)
	head := b.add(MapPartition, "head", init)
	head.Iterations = 3
	b.sink(head)
	res := b.add(Source, "result")
	res.SizeOf = head
	b.sink(res)
	hinted := b.add(Source, "hinted result")
	hinted.SizeOf, hinted.EstimatedRows = head, 7
	b.sink(hinted)
	b.plan(t)
	if got := res.Decision.Estimate.Rows; got != 12_345 {
		t.Errorf("result estimated at %d rows, want the partial solution's 12345", got)
	}
	if got := hinted.Decision.Estimate.Rows; got != 7 {
		t.Errorf("a declared estimate gave %d rows, want 7", got)
	}
}

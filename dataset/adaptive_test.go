package dataset

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/text"
	"github.com/weirdata/weir/optimizer"
)

// The adaptive tests run a join whose left input is a filter over 100,000
// records: the planner guesses the filter keeps half of them and repartitions
// both inputs, but it keeps 5 (or, for the control, really half). Stage 1 runs
// the filter and stores its 5 records; stage 2 plans the join again, with the
// real count, and broadcasts them.

type adRow struct{ K, V int64 }

type adOut struct{ K, L, R int64 }

const (
	adLeftRows  = 100_000
	adRightRows = 60_000
)

func adInputs() (left, right []adRow) {
	for i := range adLeftRows {
		left = append(left, adRow{K: int64(i), V: int64(3 * i)})
	}
	for i := range adRightRows {
		right = append(right, adRow{K: int64(i % 45_000), V: int64(i)})
	}
	return left, right
}

// adProgram builds the join of keep(left) with right on K, collected. The
// node ids are: #0 left, #1 the filter, #2 right, #3 the join, #4 Collect.
func adProgram(env *Env, keep func(adRow) bool, fn func(l, r *adRow) adOut) *Collected[adOut] {
	left, right := adInputs()
	small := FromSlice(env, left).Filter(keep)
	j := Join(small, FromSlice(env, right), func(r adRow) int64 { return r.K }, func(r adRow) int64 { return r.K }, fn)
	return Collect(j)
}

func adJoin(l, r *adRow) adOut { return adOut{K: l.K, L: l.V, R: r.V} }

func keepFive(r adRow) bool { return r.K%20_000 == 0 }
func keepHalf(r adRow) bool { return r.K%2 == 0 }

// adOracle joins keep(left) with right by nested loops, sorted.
func adOracle(keep func(adRow) bool) []adOut {
	left, right := adInputs()
	byKey := map[int64][]adRow{}
	for _, r := range right {
		byKey[r.K] = append(byKey[r.K], r)
	}
	var out []adOut
	for _, l := range left {
		if !keep(l) {
			continue
		}
		for _, r := range byKey[l.K] {
			out = append(out, adJoin(&l, &r))
		}
	}
	return sortedAd(out)
}

func sortedAd(xs []adOut) []adOut {
	xs = slices.Clone(xs)
	slices.SortFunc(xs, func(a, b adOut) int {
		return cmp.Or(cmp.Compare(a.K, b.K), cmp.Compare(a.L, b.L), cmp.Compare(a.R, b.R))
	})
	return xs
}

func adEnv(t *testing.T, c config, adaptive bool) (*Env, string) {
	t.Helper()
	tmp := t.TempDir()
	t.Cleanup(func() {
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("files left in %s: %v", tmp, ents)
		}
	})
	return New(Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: 4096, TmpDir: tmp, BatchSize: 64,
		Adaptive: adaptive}), tmp
}

var adConfigs = []config{
	{"p1", 1, 0},
	{"p3", 3, 0},
	{"p3-tiny-memory", 3, 96 << 10},
}

func TestAdaptiveBroadcastsTheFilteredSide(t *testing.T) {
	want := adOracle(keepFive)
	for _, c := range adConfigs {
		t.Run(c.name, func(t *testing.T) {
			env, _ := adEnv(t, c, false)
			got := adProgram(env, keepFive, adJoin)
			fixed, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sortedAd(got.Values()), want) {
				t.Fatalf("plain run: got %v, want %v", sortedAd(got.Values()), want)
			}

			env, _ = adEnv(t, c, true)
			got = adProgram(env, keepFive, adJoin)
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sortedAd(got.Values()), want) {
				t.Fatalf("adaptive run: got %v, want %v", sortedAd(got.Values()), want)
			}

			join, filter := res.Plan.Nodes[3], res.Plan.Nodes[1]
			if join.Kind != optimizer.Join || filter.Kind != optimizer.Map {
				t.Fatalf("nodes 1 and 3 are %s and %s:\n%s", filter.Kind, join.Kind, res.Plan.Text())
			}
			if join.Decision.Ship[0] != optimizer.Broadcast || join.Decision.Local != optimizer.HybridHashBuildFirst {
				t.Errorf("the join does not broadcast and build from its 5-row input:\n%s", res.Plan.Text())
			}
			// The join is re-planned exactly when the plain plan did not broadcast already.
			wasBroadcast := fixed.Plan.Nodes[3].Decision.Ship[0] == optimizer.Broadcast
			if c.parallelism == 3 && wasBroadcast {
				t.Fatalf("the plain plan broadcasts already; the test needs a plan it can change:\n%s", fixed.Plan.Text())
			}
			if join.Actual == nil || join.Actual.Replanned == wasBroadcast {
				t.Errorf("join replanned = %v, plain plan broadcast = %v:\n%s", join.Actual != nil && join.Actual.Replanned, wasBroadcast, res.Plan.Text())
			}
			note := "re-planned: #1 produced 5 rows, estimated 50000"
			if hasNote := slices.Contains(join.Decision.Notes, note); hasNote == wasBroadcast {
				t.Errorf("join notes %q: want %q iff re-planned", join.Decision.Notes, note)
			}
			if testing.Verbose() {
				t.Logf("plain:\n%s\nadaptive:\n%s", fixed.Plan.Text(), res.Plan.Text())
			}
			if !strings.Contains(res.Plan.Text(), "in0:BROADCAST") || !strings.Contains(res.Plan.Text(), "| actual") {
				t.Errorf("Result.Plan is not the final plan with actuals:\n%s", res.Plan.Text())
			}
			for i, n := range res.Plan.Nodes {
				if n.Actual == nil {
					t.Fatalf("node %d has no actuals", i)
				}
				if i != 3 && n.Actual.Replanned {
					t.Errorf("node %d is marked replanned", i)
				}
			}
			for i, rows := range []int64{adLeftRows, 5, adRightRows, int64(len(want)), int64(len(want))} {
				if got := res.Plan.Nodes[i].Actual.Rows; got != rows {
					t.Errorf("node %d: actual rows %d, want %d", i, got, rows)
				}
			}
			if !slices.ContainsFunc(filter.Decision.Notes, func(s string) bool { return strings.HasPrefix(s, "adaptive: materialized, 5 rows") }) {
				t.Errorf("filter notes %q", filter.Decision.Notes)
			}
		})
	}
}

func TestAdaptiveKeepsAPlanWhoseEstimatesHold(t *testing.T) {
	want := adOracle(keepHalf)
	for _, c := range adConfigs[:2] { // with the tiny budget, a 50,000-row build side spills for seconds
		t.Run(c.name, func(t *testing.T) {
			env, _ := adEnv(t, c, false)
			adProgram(env, keepHalf, adJoin)
			fixed, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			env, _ = adEnv(t, c, true)
			got := adProgram(env, keepHalf, adJoin)
			res, err := env.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sortedAd(got.Values()), want) {
				t.Fatalf("got %d rows, want %d", len(got.Values()), len(want))
			}
			for i, n := range res.Plan.Nodes {
				if n.Actual.Replanned {
					t.Errorf("node %d is marked replanned:\n%s", i, res.Plan.Text())
				}
				if a, b := fixed.Plan.Nodes[i].Decision, n.Decision; !slices.Equal(a.Ship, b.Ship) || a.Local != b.Local {
					t.Errorf("node %d: ships %v local %s, the plain plan %v %s", i, b.Ship, b.Local, a.Ship, a.Local)
				}
			}
			if got := res.Plan.Nodes[1].Actual.Rows; got != adLeftRows/2 {
				t.Errorf("filter: %d rows", got)
			}
		})
	}
}

// TestAdaptiveSideSinkCommitsAfterStageTwo puts an Output of the left input
// in stage 1 and fails stage 2: the Output must leave nothing. Without the
// failure it commits once.
func TestAdaptiveSideSinkCommitsAfterStageTwo(t *testing.T) {
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			env, _ := adEnv(t, config{"p3", 3, 0}, true)
			out := filepath.Join(t.TempDir(), "out")
			left, _ := adInputs()
			src := FromSlice(env, left)
			Output(Map(src, func(r adRow) string { return fmt.Sprint(r.K) }), "keys", text.NewSink(out))
			right := FromSlice(env, left[:1000])
			got := Collect(Join(src.Filter(keepFive), right, func(r adRow) int64 { return r.K }, func(r adRow) int64 { return r.K },
				func(l, r *adRow) adOut {
					if fail {
						panic("stage two fails")
					}
					return adJoin(l, r)
				}))
			res, err := env.Execute(context.Background())
			if fail {
				if err == nil || !strings.Contains(err.Error(), "stage two fails") {
					t.Fatalf("err = %v", err)
				}
				if names := dirNames(t, out); len(names) != 0 {
					t.Fatalf("the failed job left %v", names)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v := got.Values(); len(v) != 1 || v[0] != (adOut{K: 0, L: 0, R: 0}) {
				t.Errorf("join: %v", v)
			}
			if names := dirNames(t, out); len(names) != 3 {
				t.Errorf("output files %v", names)
			}
			if !strings.Contains(res.Plan.Text(), "materialized, 5 rows") {
				t.Errorf("plan:\n%s", res.Plan.Text())
			}
		})
	}
}

// TestAdaptiveCancellation cancels the job in stage 1 (in the filter) and in
// stage 2 (in the join): Execute fails, and no spill or store file is left
// (adEnv checks TmpDir; goleak checks goroutines). Both cancel early in a
// source subtask's range (stage 2: the first probe batch, key 0), so the
// source, held back by the bounded exchange, still has batches to emit and
// sees the cancellation.
func TestAdaptiveCancellation(t *testing.T) {
	for _, stage := range []int{1, 2} {
		for _, c := range adConfigs[1:] {
			t.Run(fmt.Sprintf("stage%d/%s", stage, c.name), func(t *testing.T) {
				env, _ := adEnv(t, c, true)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				keep := func(r adRow) bool {
					if stage == 1 && r.K == 50_000 {
						cancel()
					}
					return keepFive(r)
				}
				adProgram(env, keep, func(l, r *adRow) adOut {
					if stage == 2 {
						cancel()
					}
					return adJoin(l, r)
				})
				if _, err := env.Execute(ctx); err == nil || !strings.Contains(err.Error(), "context canceled") {
					t.Fatalf("err = %v", err)
				}
			})
		}
	}
}

// TestAdaptiveWithoutCuts runs a join of two sources: nothing to measure, so
// the program runs once, as planned.
func TestAdaptiveWithoutCuts(t *testing.T) {
	env, _ := adEnv(t, config{"p2", 2, 0}, true)
	left, right := adInputs()
	got := Collect(Join(FromSlice(env, left), FromSlice(env, right[:10]), func(r adRow) int64 { return r.K },
		func(r adRow) int64 { return r.K }, adJoin))
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Values()) != 10 || strings.Contains(res.Plan.Text(), "adaptive:") || len(res.Metrics.Vertices) != 4 {
		t.Errorf("%d rows, %d vertices, plan:\n%s", len(got.Values()), len(res.Metrics.Vertices), res.Plan.Text())
	}
}

package stream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
)

// TestSpreadWatermarkAlignment is TestWatermarkAlignmentEndToEnd with the
// two source subtasks in two processes (two parts of a spread job in this
// test, one slot each, on one manual clock): the subtask of part 1
// registers and reports to the alignment in part 0, whose announcements
// come back over the control link. With alignment no fast record runs
// past the bound once the first announcements came; without, the same
// oracle finds the fast split far ahead.
func TestSpreadWatermarkAlignment(t *testing.T) {
	const n = 150 // records per split
	for _, align := range []bool{true, false} {
		t.Run(fmt.Sprint("align=", align), func(t *testing.T) {
			clk := manual()
			g := newSkewedGen(clk, n)
			peers := []*shuffletest.Peer{
				shuffletest.Start(t, shuffle.Options{Name: "p0", HeartbeatInterval: 100 * time.Millisecond}),
				shuffletest.Start(t, shuffle.Options{Name: "p1", HeartbeatInterval: 100 * time.Millisecond}),
			}
			var jobs []*Job
			var got []*Collected[skewed]
			for k := range 2 {
				sp := &Spread{Part: k, Slots: []int{1, 1}, Job: "0123456789abcdef0123456789abcdef",
					Transport: func(part func(v, i int) int) (Transport, error) {
						return &dataplane.Transport{Job: fmt.Sprint("align/", align), Client: peers[k].Client, Server: peers[k].Server,
							Addr: func(v, i int) string { return peers[part(v, i)].Addr }}, nil
					}}
				env := New(Options{Parallelism: 2, Clock: clk, AutoWatermarkInterval: alignEvery, Spread: sp})
				got = append(got, skewedJob(env, g, 2*n, 2*float64(time.Second/alignEvery), align))
				j, err := env.Start(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer j.Cancel()
				jobs = append(jobs, j)
			}
			waitUntil(t, "the first records", func() bool { return g.produced[0].Load() >= 1 && g.produced[1].Load() >= 1 })
			for k := int64(2); k <= n; k++ {
				stepSlow(t, g, k)
			}
			for done := false; !done; { // the fast split reads on to its end
				select {
				case <-jobs[0].Done():
					done = true
				case <-time.After(time.Millisecond):
					clk.Advance(alignInterval)
				}
			}
			for k, j := range jobs {
				if _, err := j.Wait(); err != nil {
					t.Fatalf("part %d: %v", k, err)
				}
			}
			recs := append(values(got[0]), values(got[1])...)
			if next := checkSplits(t, recs, [2]int64{}); next != [2]int64{n, n} {
				t.Fatalf("read %v records of the splits, want %d each", next, n)
			}
			checked, bad := alignmentViolations(recs, (3 * alignInterval).Milliseconds(), n, -1<<63)
			t.Logf("%d fast records checked, %d past the bound", checked, len(bad))
			if !align {
				if len(bad) < checked/2 {
					t.Fatalf("without alignment only %d of %d fast records ran ahead", len(bad), checked)
				}
				return
			}
			if len(bad) > 0 {
				t.Fatalf("%d of %d fast records past the slow split's timestamp + %d ms, the first %+v", len(bad), checked, alignDrift, bad[0])
			}
			if checked < 10 {
				t.Fatalf("only %d fast records read while the slow split ran: the oracle checked nothing", checked)
			}
		})
	}
}

package tpch

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/flow"
)

// runSpread runs query n over dir spread over one Env per entry of slots,
// each with its own shuffle server, all at once, and returns each one's
// result.
func runSpread(t *testing.T, dir string, n int, slots []int, memory int64, segment int) []Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	peers := make([]*shuffletest.Peer, len(slots))
	total := 0
	for k := range slots {
		peers[k] = shuffletest.Start(t, shuffle.Options{Name: fmt.Sprintf("p%d", k), HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 5 * time.Second})
		total += slots[k]
	}
	type out struct {
		res Result
		err error
	}
	outs := make(chan out, len(slots))
	results := make([]Result, len(slots))
	for k := range slots {
		tmp := t.TempDir()
		sp := &dataset.Spread{Part: k, Slots: slots, Transport: func(stage int, part func(v, i int) int) (flow.Transport, error) {
			return &dataplane.Transport{Job: fmt.Sprintf("q%d-%d", n, stage), Attempt: 1, Client: peers[k].Client, Server: peers[k].Server,
				Addr: func(v, i int) string { return peers[part(v, i)].Addr }}, nil
		}}
		env := dataset.New(dataset.Options{Parallelism: total, Memory: memory, SegmentSize: segment, TmpDir: tmp, Spread: sp})
		go func() {
			res, err := Run(ctx, env, dir, n)
			if err != nil {
				cancel() // a process that failed takes the others down, as a JobManager would
				err = fmt.Errorf("process %d: %w", k, err)
			} else if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				err = fmt.Errorf("process %d: spill directory not empty: %v", k, ents)
			}
			results[k] = res
			outs <- out{res, err}
		}()
	}
	for range slots {
		if o := <-outs; o.err != nil {
			t.Error(o.err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return results
}

// TestQueriesSpread runs every query spread over processes (dataset.Spread
// over cluster/dataplane): each process must print DuckDB's answer, as
// Collect gathers the whole result into each.
func TestQueriesSpread(t *testing.T) {
	for _, n := range Numbers() {
		want := readAnswer(t, answerPath(sf001, n))
		for _, c := range []struct {
			name    string
			slots   []int
			memory  int64
			segment int
		}{
			{"1+1", []int{1, 1}, 0, 0},
			{"2+1-tiny", []int{2, 1}, 64 << 10, 4096},
		} {
			t.Run(fmt.Sprintf("q%02d/%s", n, c.name), func(t *testing.T) {
				for k, res := range runSpread(t, sf001, n, c.slots, c.memory, c.segment) {
					t.Run(fmt.Sprintf("process%d", k), func(t *testing.T) { compare(t, res, want) })
				}
			})
		}
	}
}

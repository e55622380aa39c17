package spread

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
	"github.com/weirdata/weir/dataset"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// program sums the squares of 1..n per residue modulo 7, sorted by
// residue, over two executions: the second reads the first's result.
func program(ctx context.Context, env *dataset.Env, n int) ([]int64, error) {
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = int64(i + 1)
	}
	type kv struct{ K, V int64 }
	sums := dataset.GroupBy(dataset.Map(dataset.FromSlice(env, xs), func(x int64) kv { return kv{x % 7, x * x} }),
		func(p kv) int64 { return p.K }).Reduce(func(a, b kv) kv { return kv{a.K, a.V + b.V} })
	got := dataset.Collect(dataset.Sort(sums, func(p kv) int64 { return p.K }, dataset.Ascending))
	if _, err := env.Execute(ctx); err != nil {
		return nil, err
	}
	var out []int64
	for _, p := range got.Values() {
		out = append(out, p.V)
	}
	// a second execution of the same Env, over the first's result
	total := dataset.Count(dataset.FromSlice(env, out).Filter(func(v int64) bool { return v%2 == 0 }))
	if _, err := env.Execute(ctx); err != nil {
		return nil, err
	}
	return append(out, total.N()), nil
}

// TestDataset: two shares of slots 2 and 1, each running the program with
// Dataset of its cluster.Spread, both get what one process gets, over two
// executions; nil stays nil.
func TestDataset(t *testing.T) {
	if Dataset(nil) != nil {
		t.Fatal("Dataset(nil) is not nil")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 100000
	want, err := program(ctx, dataset.New(dataset.Options{Parallelism: 3}), n)
	if err != nil {
		t.Fatal(err)
	}
	peers := []*shuffletest.Peer{
		shuffletest.Start(t, shuffle.Options{Name: "tm1"}),
		shuffletest.Start(t, shuffle.Options{Name: "tm2"}),
	}
	addrs := []string{peers[0].Addr, peers[1].Addr}
	got := make([][]int64, 2)
	errs := make(chan error, 2)
	for k := range peers {
		s := &cluster.Spread{Part: k, Slots: []int{2, 1}, Addrs: addrs, Channels: "job/1-1", Client: peers[k].Client, Server: peers[k].Server}
		go func() {
			var err error
			got[k], err = program(ctx, dataset.New(dataset.Options{Parallelism: 3, Spread: Dataset(s)}), n)
			if err != nil {
				cancel()
				err = fmt.Errorf("share %d: %w", k, err)
			}
			errs <- err
		}()
	}
	for range peers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for k := range got {
		if !slices.Equal(got[k], want) {
			t.Fatalf("share %d got %v, want %v", k, got[k], want)
		}
	}
}

package dataset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/text"
)

type wordCount struct {
	Word string
	N    int64
}

// spreadProgram counts the words of in: the counts sorted by word
// (Collect), the number of lines (Count), and "word n" lines written by
// Output at parallelism 3 under out (a directory of part files).
func spreadProgram(t *testing.T, env *dataset.Env, in, out string) (*dataset.Collected[wordCount], *dataset.Counted) {
	src, err := text.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	lines := dataset.FromSource(env, "lines", src)
	words := dataset.FlatMap(lines, func(l string, emit func(wordCount)) {
		for _, w := range strings.Fields(l) {
			emit(wordCount{w, 1})
		}
	})
	counts := dataset.GroupBy(words, func(w wordCount) string { return w.Word }).Reduce(func(a, b wordCount) wordCount {
		a.N += b.N
		return a
	})
	sorted := dataset.Sort(counts, func(w wordCount) string { return w.Word }, dataset.Ascending)
	dataset.Output(dataset.Map(sorted, func(w wordCount) string { return fmt.Sprintf("%s %d", w.Word, w.N) }).WithParallelism(3),
		"counts", text.NewSink(out))
	return dataset.Collect(sorted), dataset.Count(lines)
}

// spreadInput writes lines of skewed words, enough for several splits.
func spreadInput(t *testing.T) string {
	var b strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&b, "w%d the w%d %s\n", i%997, i%7, strings.Repeat("x", i%50))
	}
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestSpread runs a program spread over two processes (two Envs of this
// test, with slots 2 and 1, over cluster/dataplane) and in one: every
// process collects and counts what the one process does, and the part
// files the processes commit together equal its own.
func TestSpread(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := spreadInput(t)
	oneOut := filepath.Join(t.TempDir(), "out")
	one := dataset.New(dataset.Options{Parallelism: 3})
	wantVals, wantN := spreadProgram(t, one, in, oneOut)
	if _, err := one.Execute(ctx); err != nil {
		t.Fatal(err)
	}

	for _, memory := range []int64{0, 1 << 20} {
		t.Run(fmt.Sprintf("memory=%d", memory), func(t *testing.T) {
			peers := []*shuffletest.Peer{
				shuffletest.Start(t, shuffle.Options{Name: "p0", HeartbeatInterval: 100 * time.Millisecond}),
				shuffletest.Start(t, shuffle.Options{Name: "p1", HeartbeatInterval: 100 * time.Millisecond}),
			}
			slots := []int{2, 1}
			out := filepath.Join(t.TempDir(), "out")
			type result struct {
				vals *dataset.Collected[wordCount]
				n    *dataset.Counted
				err  error
			}
			results := make([]result, 2)
			done := make(chan int, 2)
			for k := range 2 {
				sp := &dataset.Spread{Part: k, Slots: slots, Transport: func(stage int, part func(v, i int) int) (dataset.Transport, error) {
					return &dataplane.Transport{Job: fmt.Sprintf("spread/%d", stage), Client: peers[k].Client, Server: peers[k].Server,
						Addr: func(v, i int) string { return peers[part(v, i)].Addr }}, nil
				}}
				env := dataset.New(dataset.Options{Parallelism: 3, Memory: memory, SegmentSize: 4096, TmpDir: t.TempDir(), Spread: sp})
				vals, n := spreadProgram(t, env, in, out)
				go func() {
					_, err := env.Execute(ctx)
					results[k] = result{vals, n, err}
					done <- k
				}()
			}
			<-done
			<-done
			for k, r := range results {
				if r.err != nil {
					t.Fatalf("process %d: %v", k, r.err)
				}
				if !slices.Equal(r.vals.Values(), wantVals.Values()) || r.n.N() != wantN.N() {
					t.Fatalf("process %d collected %d counts and counted %d lines, want %d and %d", k, len(r.vals.Values()), r.n.N(), len(wantVals.Values()), wantN.N())
				}
			}
			for i := range 3 {
				name := fmt.Sprintf("part-%05d.txt", i)
				got, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join(oneOut, name))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Fatalf("%s differs from one process's", name)
				}
			}
		})
	}
}

// TestSpreadRefuses: a Spread without a valid placement, and a program
// whose iteration has an aggregator without a serializer, are refused
// before anything runs.
func TestSpreadRefuses(t *testing.T) {
	transport := func(int, func(v, i int) int) (dataset.Transport, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		sp   dataset.Spread
		loop bool
		want string
	}{
		{"part out of range", dataset.Spread{Part: 2, Slots: []int{1, 1}, Transport: transport}, false, "part 2 of 2"},
		{"no slots", dataset.Spread{Slots: []int{1, 0}, Transport: transport}, false, "process 1 has 0 slots"},
		{"no transport", dataset.Spread{Slots: []int{1}}, false, "without a Transport"},
		{"aggregator", dataset.Spread{Slots: []int{1, 1}, Transport: transport}, true, "chan int has no serializer"},
		{"adaptive", dataset.Spread{Slots: []int{1, 1}, Transport: transport}, false, "Options.Adaptive runs in one process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.sp
			env := dataset.New(dataset.Options{Parallelism: 2, Spread: &sp, Adaptive: tc.name == "adaptive"})
			ds := dataset.FromSlice(env, []int{1, 2, 3})
			if tc.loop {
				ds = dataset.Iterate(ds, 3, func(it *dataset.Iteration, p *dataset.DataSet[int]) *dataset.DataSet[int] {
					dataset.NewLoopAggregator(it, make(chan int), func(a, _ chan int) chan int { return a })
					return dataset.Map(p, func(v int) int { return v + 1 })
				})
			}
			dataset.Collect(ds)
			if _, err := env.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Execute: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

package tpch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/oracle"
)

// sf001 is the SF 0.01 data copied into the repository, with its answers.
const sf001 = "../testdata/tpch"

// sf01 returns the SF 0.1 data directory and its answers directory, or skips
// the test when the shared data is absent.
func sf01(t *testing.T) (data, answers string) {
	t.Helper()
	for _, root := range []string{"../../shared/tpch", "/work/shared/tpch"} {
		data, answers = filepath.Join(root, "sf0.1"), filepath.Join(root, "answers", "sf0.1")
		if _, err := os.Stat(filepath.Join(data, "lineitem.parquet")); err != nil {
			continue
		}
		if _, err := os.Stat(answers); err != nil {
			continue
		}
		return data, answers
	}
	t.Skip("SF 0.1 TPC-H data not found (../../shared/tpch/sf0.1)")
	return "", ""
}

// config is one way to run a query.
type config struct {
	name        string
	parallelism int
	memory      int64 // 0: unlimited
	segment     int
}

var configs = []config{
	{name: "p1", parallelism: 1},
	{name: "p2", parallelism: 2},
	{name: "p1-small", parallelism: 1, memory: 256 << 10, segment: 4096},
	{name: "p2-tiny", parallelism: 2, memory: 64 << 10, segment: 4096},
}

// spills are the queries whose joins and groupings hold enough SF 0.01
// records to spill within p2-tiny's budget. The others reduce their input
// to a handful of groups in a combiner (Q1, Q6) or build a hash table of a
// few hundred filtered rows (Q19's parts; Q12's lineitems, which the
// cost-based planner broadcasts once the Parquet filters' estimate shows how
// few they are), which fits in any budget.
var spills = []int{3, 5, 7, 8, 9, 10, 11, 13, 14, 16, 18, 20, 21}

// run executes query n over dir in config c and checks that the spill
// directory is left empty.
func run(t *testing.T, c config, dir string, n int) Result {
	t.Helper()
	tmp := t.TempDir()
	env := dataset.New(dataset.Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: c.segment, TmpDir: tmp})
	res, err := Run(context.Background(), env, dir, n)
	if err != nil {
		t.Fatalf("q%d %s: %v", n, c.name, err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("q%d %s: spill directory not empty: %v", n, c.name, ents)
	}
	t.Logf("q%d %s: spilled %d bytes, peak memory %d bytes", n, c.name, res.Spilled, res.PeakMemory)
	return res
}

func TestQueriesSF001(t *testing.T) {
	for _, n := range Numbers() {
		want := readAnswer(t, answerPath(sf001, n))
		for _, c := range configs {
			t.Run(fmt.Sprintf("q%02d/%s", n, c.name), func(t *testing.T) {
				res := run(t, c, sf001, n)
				compare(t, res, want)
				if c.name == "p2-tiny" && slices.Contains(spills, n) && res.Spilled == 0 {
					t.Errorf("q%d spilled nothing within %d bytes", n, c.memory)
				}
			})
		}
	}
}

func TestQueriesSF01(t *testing.T) {
	data, answers := sf01(t)
	if testing.Short() {
		t.Skip("SF 0.1 in -short mode")
	}
	for _, n := range Numbers() {
		want := readAnswer(t, filepath.Join(answers, fmt.Sprintf("q%02d.csv", n)))
		t.Run(fmt.Sprintf("q%02d", n), func(t *testing.T) {
			compare(t, run(t, configs[1], data, n), want)
		})
	}
}

// answerPath is the DuckDB answer of query n for the SF 0.01 data in dir.
func answerPath(dir string, n int) string {
	return filepath.Join(dir, "answers", "sf0.01", fmt.Sprintf("q%02d.csv", n))
}

// readAnswer reads a DuckDB answer file: a header row, then the rows.
func readAnswer(t *testing.T, path string) [][]string {
	t.Helper()
	recs, err := oracle.ReadAnswer(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// compare checks res against want (header row first) row by row, in order:
// numbers within a relative 1e-9, everything else exactly.
func compare(t *testing.T, res Result, want [][]string) {
	t.Helper()
	if err := oracle.CompareAnswer(append([][]string{res.Columns}, res.Rows...), want); err != nil {
		t.Error(err)
	}
}

func TestRegistry(t *testing.T) {
	want := make([]int, 22)
	for i := range want {
		want[i] = i + 1
	}
	if got := Numbers(); !slices.Equal(got, want) {
		t.Fatalf("Numbers() = %v, want %v", got, want)
	}
	for _, n := range Numbers() {
		s, ok := Query(n)
		if !ok || s.N != n || len(s.Columns) == 0 || s.Title == "" {
			t.Errorf("Query(%d) = %+v, %v", n, s, ok)
		}
	}
	if _, ok := Query(23); ok {
		t.Errorf("Query(23) found; TPC-H has 22 queries")
	}
	_, err := Run(context.Background(), dataset.New(dataset.Options{}), sf001, 23)
	if err == nil || !strings.Contains(err.Error(), "query 23 is not implemented") {
		t.Errorf("Run(2): %v", err)
	}
}

func TestMissingData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	_, err := Run(context.Background(), dataset.New(dataset.Options{}), dir, 6)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("missing data directory: %v", err)
	}
	empty := t.TempDir()
	_, err = Run(context.Background(), dataset.New(dataset.Options{}), empty, 6)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(empty, "lineitem.parquet")) {
		t.Fatalf("missing lineitem.parquet: %v", err)
	}
}

// TestCancel cancels Q5, the query that spills most, while it runs within a
// tiny budget: Run returns the context's error and leaves no spill file.
func TestCancel(t *testing.T) {
	for _, delay := range []time.Duration{0, 20 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			tmp := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				select {
				case <-time.After(delay):
					cancel()
				case <-ctx.Done():
				}
			}()
			env := dataset.New(dataset.Options{Parallelism: 2, Memory: 64 << 10, SegmentSize: 4096, TmpDir: tmp})
			_, err := Run(ctx, env, sf001, 5)
			cancel()
			<-done
			switch {
			case err == nil:
				t.Logf("q5 finished before the cancellation after %v", delay)
			case !errors.Is(err, context.Canceled):
				t.Errorf("q5 cancelled after %v: %v, want context.Canceled", delay, err)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("spill directory not empty after cancellation: %v", ents)
			}
		})
	}
}

// TestPlans checks the cost-based planner's choices that do not depend on
// estimates being close: the tiny nation and region tables are never
// repartitioned (each is broadcast, or forwarded as the probe side of a join
// with the other).
func TestPlans(t *testing.T) {
	for _, n := range Numbers() {
		res := run(t, configs[1], sf001, n)
		for _, line := range strings.Split(res.Plan.Text(), "\n") {
			if !strings.Contains(line, "Read nation") && !strings.Contains(line, "Read region") {
				continue
			}
			if !strings.Contains(line, ":BROADCAST/") && !strings.Contains(line, ":FORWARD/") {
				t.Errorf("q%d: a tiny table is repartitioned: %s\n%s", n, strings.TrimSpace(line), res.Plan.Text())
			}
		}
	}
}

// TestKeysAreNamed checks the programs' annotations: every join and every
// grouping by key names its key fields, and in Q3 the grouping after the
// lineitem ⋈ orders join sees orderkey, the join's key, forwarded by the join
// with the key type it groups by, so a planner can tell the data is already
// partitioned for it.
func TestKeysAreNamed(t *testing.T) {
	for _, q := range Numbers() {
		env := dataset.New(dataset.Options{Parallelism: 2})
		s, _ := Query(q)
		if _, err := s.Build(env, sf001); err != nil {
			t.Fatal(err)
		}
		p, err := env.Plan()
		if err != nil {
			t.Fatalf("q%d: %v", q, err)
		}
		for _, n := range p.Nodes {
			named := len(n.Keys) == len(n.Inputs)
			for i := range n.Inputs {
				named = named && len(n.Keys[i]) > 0
			}
			switch {
			case n.Kind.String() == "Join" && !named,
				n.Kind.String() == "Reduce" && !strings.HasPrefix(n.Name, "AggregateAll") && !named:
				t.Errorf("q%d: %s does not name its key: %q", q, n.Name, n.Keys)
			}
		}
		if q != 3 {
			continue
		}
		var reduce = p.Nodes[0]
		for _, n := range p.Nodes {
			if strings.HasPrefix(n.Name, "Reduce at") {
				reduce = n
			}
		}
		join := reduce.Inputs[0]
		if join.Kind.String() != "Join" || !slices.Equal(reduce.Keys[0], []string{"orderkey"}) ||
			!slices.Equal(join.Keys[0], []string{"orderkey"}) || !slices.Equal(join.Keys[1], []string{"orderkey"}) ||
			!slices.Contains(join.Forwards[0], "orderkey") || join.KeyTypes[0] != reduce.KeyTypes[0] {
			t.Errorf("q3: %s on %q (%s) after %s on %q (%q) forwarding %q", reduce.Name, reduce.Keys, reduce.KeyTypes,
				join.Name, join.Keys, join.KeyTypes, join.Forwards)
		}
	}
}

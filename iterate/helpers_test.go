package iterate

import (
	"context"
	"os"
	"testing"

	"github.com/weirdata/weir/dataset"
)

// config is one way to run a job: its parallelism and memory budget (0: none).
type config struct {
	name        string
	parallelism int
	memory      int64
}

var configs = []config{{"p1", 1, 0}, {"p3", 3, 0}, {"p2-tiny-memory", 2, 96 << 10}} // tiny: caches and aggregators spill

// newEnv returns an Env for c whose spill directory must be empty after the
// test.
func newEnv(t *testing.T, c config) *dataset.Env {
	t.Helper()
	tmp := t.TempDir()
	t.Cleanup(func() {
		if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
			t.Errorf("spill files left in %s: %v", tmp, ents)
		}
	})
	return dataset.New(dataset.Options{Parallelism: c.parallelism, Memory: c.memory, SegmentSize: 4096, TmpDir: tmp, BatchSize: 64})
}

// execute runs env's program and returns its result.
func execute(t *testing.T, env *dataset.Env) *dataset.Result {
	t.Helper()
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func worksets(s []dataset.SuperstepStats) []int64 {
	out := make([]int64, len(s))
	for i, x := range s {
		out[i] = x.Records
	}
	return out
}

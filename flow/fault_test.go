package flow

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirdata/weir/spill"
)

// TestSpillFaults: a spill file system failure on a blocking or sampled Range
// edge fails the job with an error naming the edge and the file operation, and
// still leaves no file and no reservation behind.
func TestSpillFaults(t *testing.T) {
	edges := []struct {
		name string
		part Partitioner[rec]
		mode ExchangeMode
	}{
		{"blocking-hash", Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Blocking},
		{"sampled-range", Partitioner[rec]{Strategy: Range, Key: keyOf}, Pipelined},
	}
	for _, ed := range edges {
		for _, op := range []spill.Op{spill.OpCreate, spill.OpWrite, spill.OpOpen, spill.OpRead} {
			for _, nth := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%v/%d", ed.name, op, nth), func(t *testing.T) {
					env := newTestEnv(t, budgets[1].opts)
					ffs := spill.NewFaultFS(env.fs)
					ffs.FailNth(op, nth)
					g := NewGraph()
					src := g.Vertex("source", 2, sourceBody(genInput(2, 4000, uniformKeys, 8)))
					dst := g.Vertex("sink", 2, newCollector(2).body)
					Connect(g, src, dst, ed.part, ed.mode, recCodec(t))
					opts := env.options(Options{BatchSize: 64})
					opts.FS = ffs
					if op == spill.OpCreate && nth > 1 {
						opts.Spill.FileSize = -1 // a file per run, so that there is a third
					}
					_, err := Execute(bg, g, opts)
					if !errors.Is(err, spill.ErrInjected) {
						t.Fatalf("got %v, want an injected fault", err)
					}
					if !strings.Contains(err.Error(), "edge source->sink") {
						t.Errorf("error does not name the edge: %v", err)
					}
					env.check(t)
				})
			}
		}
	}
}

package flow

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestBatchesInFlightReserved checks that an edge reserves its batches in
// flight (being filled, queued, held by readers) for the whole execution,
// the records' strings included, and releases them when the job ends.
func TestBatchesInFlightReserved(t *testing.T) {
	const nProd, nCons, batch = 2, 3, 64
	for _, mode := range []ExchangeMode{Pipelined, Blocking} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			env := newTestEnv(t, budgets[0].opts)
			input := make([][]rec, nProd)
			for p := range input {
				for i := range 2000 {
					input[p] = append(input[p], rec{Key: int64(i), Prod: int32(p), Seq: int64(i), Payload: strings.Repeat("x", 200)})
				}
			}
			codec := recCodec(t)
			perRec := int64(unsafe.Sizeof(rec{})) + int64(len(codec.Append(nil, &input[0][0])))
			batches := int64(nProd*nCons + nCons + nProd)
			if mode == Pipelined {
				batches += nCons * DefaultBuffers
			}
			want := batches * batch * perRec
			var least atomic.Int64 // the least Used seen by a consumer after its input ended
			least.Store(1 << 62)
			g := NewGraph()
			src := g.Vertex("source", nProd, sourceBody(input))
			dst := g.Vertex("sink", nCons, func(tc *TaskContext) error {
				r := Input[rec](tc, 0)
				for {
					if _, err := r.Next(tc.Context()); err != nil {
						if !errors.Is(err, io.EOF) {
							return err
						}
						break
					}
				}
				for used := tc.Env.Memory.Used(); ; {
					old := least.Load()
					if used >= old || least.CompareAndSwap(old, used) {
						break
					}
				}
				return nil
			})
			Connect(g, src, dst, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, mode, codec)
			res, err := Execute(bg, g, env.options(Options{BatchSize: batch}))
			if err != nil {
				t.Fatal(err)
			}
			if got := least.Load(); got < want {
				t.Errorf("a consumer saw %d bytes reserved, want at least %d for %d batches of %d records of %d bytes", got, want, batches, batch, perRec)
			}
			if res.PeakMemory < want {
				t.Errorf("peak %d, want at least %d", res.PeakMemory, want)
			}
			if used := env.mgr.Used(); used != 0 {
				t.Errorf("%d bytes still reserved after the job", used)
			}
			env.check(t)
		})
	}
}

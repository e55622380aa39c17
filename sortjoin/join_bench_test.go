package sortjoin

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// benchInput is n records with 8-byte keys and 16-byte values in one flat page, as
// an operator's input batches hold them (no pointers for the GC to scan).
type benchInput []byte

const benchRecSize = 24

func newBenchInput(n int, keyOf func(i int) uint64) benchInput {
	data := make([]byte, n*benchRecSize)
	for i := range n {
		b := data[i*benchRecSize:]
		binary.BigEndian.PutUint64(b, keyOf(i))
		binary.LittleEndian.PutUint64(b[8:], uint64(i))
		binary.LittleEndian.PutUint64(b[16:], ^uint64(i))
	}
	return data
}

func (in benchInput) iter() *benchIter { return &benchIter{data: in} }

// benchIter iterates a benchInput.
type benchIter struct {
	data  []byte
	pos   int
	start time.Time // when the first record was asked for
}

func (it *benchIter) Next() ([]byte, []byte, bool) {
	if it.pos == 0 {
		it.start = time.Now()
	}
	if it.pos+benchRecSize > len(it.data) {
		return nil, nil, false
	}
	b := it.data[it.pos : it.pos+benchRecSize : it.pos+benchRecSize]
	it.pos += benchRecSize
	return b[:8:8], b[8:], true
}

func (it *benchIter) Err() error   { return nil }
func (it *benchIter) Close() error { return nil }

// BenchmarkHashJoin joins 1M probe records with 100k build records (8-byte keys,
// 16-byte values; half of the probe keys match one build record each). probe-ns/rec
// is the probe phase alone (from the first probe record to the end) per probe record.
func BenchmarkHashJoin(b *testing.B) {
	const nBuild, nProbe = 100_000, 1_000_000
	r := rand.New(rand.NewPCG(3, 4))
	build := newBenchInput(nBuild, func(i int) uint64 { return uint64(i) * 2 })
	probe := newBenchInput(nProbe, func(int) uint64 { return r.Uint64N(2 * nBuild) })
	cases := []struct {
		name string
		mem  memory.Options
		kind JoinKind
	}{
		{"inner/in-memory", memory.Options{}, Inner},
		{"left-outer/in-memory", memory.Options{}, LeftOuter},
		{"inner/spilling-4MiB", memory.Options{Budget: 4 << 20}, Inner},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			mgr := memory.MustNewManager(c.mem)
			disk, err := spill.NewDiskFS(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer disk.Close()
			env := resource.Env{Memory: mgr, FS: disk, Spill: spill.Options{BlockSize: 64 << 10}}
			rows := 0
			emit := func(k, l, r []byte) error { rows++; return nil }
			var probeTime time.Duration
			var st JoinStats
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p := probe.iter()
				st, err = HashJoin(context.Background(), env, HashJoinOptions{Build: Right}, p, build.iter(), c.kind, emit)
				if err != nil {
					b.Fatal(err)
				}
				probeTime += time.Since(p.start)
			}
			b.StopTimer()
			b.ReportMetric(float64(probeTime.Nanoseconds())/float64(b.N*nProbe), "probe-ns/rec")
			b.ReportMetric(float64(st.SpilledPartitions), "spilled-parts")
			b.ReportMetric(float64(rows/b.N), "rows/op")
			if err := mgr.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkMergeJoin merge-joins two sorted inputs of 1M records each (8-byte keys,
// 16-byte values, two records per key on each side, half of the keys shared).
func BenchmarkMergeJoin(b *testing.B) {
	const n = 1_000_000
	left := newBenchInput(n, func(i int) uint64 { return uint64(i / 2) })
	right := newBenchInput(n, func(i int) uint64 { return uint64(i/2 + n/4) })
	for _, kind := range []JoinKind{Inner, FullOuter} {
		b.Run(kind.String(), func(b *testing.B) {
			mgr := memory.MustNewManager(memory.Options{})
			env := resource.Env{Memory: mgr}
			rows := 0
			emit := func(k, l, r []byte) error { rows++; return nil }
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := MergeJoin(context.Background(), env, "mj", left.iter(), right.iter(), kind, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2*n), "ns/input-rec")
			b.ReportMetric(float64(rows/b.N), "rows/op")
			if err := mgr.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

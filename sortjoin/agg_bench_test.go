package sortjoin

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// aggBenchInt reads a positive integer from the environment, or returns def.
func aggBenchInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// reportAggPerRecord reports ns/record and allocs/record for b.N runs over n records.
func reportAggPerRecord(b *testing.B, n int, before *runtime.MemStats) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	total := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/record")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/record")
}

// BenchmarkHashAggSum sums WEIR_BENCH_AGG_RECORDS (default 10M) little-endian int64
// values over 1k, 100k and 5M distinct 8-byte keys, uniformly drawn, in Final mode:
// Add every record, then drain the iterator. One op is the whole aggregation.
func BenchmarkHashAggSum(b *testing.B) {
	n := aggBenchInt("WEIR_BENCH_AGG_RECORDS", 10_000_000)
	for _, tc := range []struct {
		name     string
		distinct uint64
		budget   int64
	}{
		{"distinct=1k", 1_000, 0},
		{"distinct=100k", 100_000, 0},
		{"distinct=5M", 5_000_000, 0},
		{"distinct=5M/budget=64MiB", 5_000_000, 64 << 20},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			ids := make([]uint64, n)
			for i := range ids {
				ids[i] = r.Uint64N(tc.distinct)
			}
			disk, err := spill.NewDiskFS(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer disk.Close()
			env := resource.Env{Memory: memory.MustNewManager(memory.Options{Budget: tc.budget}), FS: disk}
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			var st AggStats
			for range b.N {
				st = benchHashAgg(b, env, ids, int(tc.distinct))
			}
			b.StopTimer()
			reportAggPerRecord(b, n, &before)
			b.ReportMetric(float64(st.SpilledPartitions), "spilled-partitions")
			b.ReportMetric(float64(env.Memory.Peak())/(1<<20), "peak-MiB")
			if err := env.Memory.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func benchHashAgg(b *testing.B, env resource.Env, ids []uint64, distinct int) AggStats {
	a := NewHashAggregator(env, AggOptions{Name: "bench", MaxRecursion: 3}, sumCombine)
	defer a.Close()
	var key [8]byte
	val := binary.LittleEndian.AppendUint64(nil, 1)
	for _, id := range ids {
		binary.BigEndian.PutUint64(key[:], id)
		if err := a.Add(key[:], val); err != nil {
			b.Fatal(err)
		}
	}
	it, err := a.Finish(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	groups, total := 0, uint64(0)
	for _, v, ok := it.Next(); ok; _, v, ok = it.Next() {
		groups++
		total += binary.LittleEndian.Uint64(v)
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	if total != uint64(len(ids)) || groups > distinct {
		b.Fatalf("%d groups summing to %d, want at most %d groups summing to %d", groups, total, distinct, len(ids))
	}
	if err := it.Close(); err != nil {
		b.Fatal(err)
	}
	return a.Stats()
}

// groupBenchInput returns n records sorted by 8-byte key, groupSize values per key.
func groupBenchInput(n, groupSize int) ([]Record, int64) {
	recs := make([]Record, n)
	var bytes int64
	for i := range recs {
		recs[i] = Record{
			Key: memory.AppendUint64(nil, uint64(i/groupSize)),
			Val: binary.LittleEndian.AppendUint64(nil, uint64(i)),
		}
		bytes += int64(len(recs[i].Key) + len(recs[i].Val))
	}
	return recs, bytes
}

// BenchmarkGroupSorted measures GroupSorted over an in-memory sorted input of 1M
// records (16 bytes each), consuming every value.
func BenchmarkGroupSorted(b *testing.B) {
	const n = 1 << 20
	for _, groupSize := range []int{1, 16, 1024} {
		b.Run(fmt.Sprintf("group=%d", groupSize), func(b *testing.B) {
			recs, size := groupBenchInput(n, groupSize)
			it := &sliceIter{}
			var sum uint64
			fn := func(_ []byte, vals *GroupValues) error {
				for v, ok := vals.Next(); ok; v, ok = vals.Next() {
					sum += binary.LittleEndian.Uint64(v)
				}
				return nil
			}
			b.SetBytes(size)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				*it = sliceIter{recs: recs}
				if err := GroupSorted(context.Background(), it, fn); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportAggPerRecord(b, n, &before)
		})
	}
}

// BenchmarkCombineSorted is BenchmarkGroupSorted reducing with a sum combine.
func BenchmarkCombineSorted(b *testing.B) {
	const n = 1 << 20
	for _, groupSize := range []int{1, 16, 1024} {
		b.Run(fmt.Sprintf("group=%d", groupSize), func(b *testing.B) {
			recs, size := groupBenchInput(n, groupSize)
			it := &sliceIter{}
			emit := func(_, _ []byte) error { return nil }
			b.SetBytes(size)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				*it = sliceIter{recs: recs}
				if err := CombineSorted(context.Background(), it, sumCombine, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportAggPerRecord(b, n, &before)
		})
	}
}

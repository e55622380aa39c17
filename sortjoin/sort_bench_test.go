package sortjoin

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// benchSortBytes returns the input size of BenchmarkSort: WEIR_BENCH_SORT_BYTES,
// or 64 MiB.
func benchSortBytes(b *testing.B) int {
	s := os.Getenv("WEIR_BENCH_SORT_BYTES")
	if s == "" {
		return 64 << 20
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("WEIR_BENCH_SORT_BYTES=%q is not a positive number of bytes", s)
	}
	return n
}

// printableRecords returns total bytes (rounded down to 100) of random printable
// ASCII, read as 100-byte records laid out back to back.
func printableRecords(seed uint64, total int) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	data := make([]byte, total/100*100)
	for i := range data {
		data[i] = byte(' ' + r.IntN(95))
	}
	return data
}

// BenchmarkSort sorts 100-byte records (random printable ASCII) end to end: Add,
// Finish, iterate, Close. lines: 100-byte keys, as `weir sort` uses the sorter;
// terasort: 10-byte keys and 90-byte values. The 256MiB budget sorts the default
// 64 MiB in memory; the 16MiB budget forces spilling and merging.
func BenchmarkSort(b *testing.B) {
	total := benchSortBytes(b)
	data := printableRecords(1, total)
	for _, budget := range []int64{256 << 20, 16 << 20} {
		for _, layout := range []struct {
			name   string
			keyLen int
		}{{"lines", 100}, {"terasort", 10}} {
			for _, async := range []bool{false, true} {
				name := fmt.Sprintf("budget=%dMiB/%s/async=%v", budget>>20, layout.name, async)
				b.Run(name, func(b *testing.B) {
					benchSort(b, data, budget, layout.keyLen, async)
				})
			}
		}
	}
}

func benchSort(b *testing.B, data []byte, budget int64, keyLen int, async bool) {
	disk, err := spill.NewDiskFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer disk.Close()
	m := memory.MustNewManager(memory.Options{Budget: budget})
	env := resource.Env{Memory: m, FS: disk, Spill: spill.Options{Codec: spill.None}}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var st SortStats
	for b.Loop() {
		s := NewSorter(env, SortOptions{Name: "bench", Async: async})
		for off := 0; off < len(data); off += 100 {
			if err := s.Add(data[off:off+keyLen], data[off+keyLen:off+100]); err != nil {
				b.Fatal(err)
			}
		}
		it, err := s.Finish(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			if _, _, ok := it.Next(); !ok {
				break
			}
			n++
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
		if n != len(data)/100 {
			b.Fatalf("sorted %d records, want %d", n, len(data)/100)
		}
		st = s.Stats()
	}
	b.ReportMetric(float64(st.Runs), "runs")
	b.ReportMetric(float64(st.FanIn), "fan-in")
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkIndexSort compares the radix sort of the index with slices.SortFunc
// (pdqsort) on the same entries: 1M random 99-byte printable keys, as in a
// sort buffer of `weir sort`, 1M keys sharing their 8-byte prefix, and 1M
// 8-byte keys with 16 records each (a graph's edges by source, whose equal
// prefixes are equal keys).
func BenchmarkIndexSort(b *testing.B) {
	for _, keys := range []string{"random", "shared-prefix", "int64-16-each"} {
		r := rand.New(rand.NewPCG(2, 2))
		m := memory.MustNewManager(memory.Options{})
		buf := newSortBuffer(m, "bench", memory.Unlimited, 0, 0)
		key := make([]byte, 99)
		const n = 1 << 20
		for range n {
			for i := range key {
				key[i] = byte(' ' + r.IntN(95))
			}
			switch keys {
			case "shared-prefix":
				copy(key, "sameprefix")
			case "int64-16-each":
				key = binary.BigEndian.AppendUint64(key[:0], r.Uint64N(n/16))
			}
			buf.add(key, nil)
			key = key[:99]
		}
		saved := append([]entry(nil), buf.idx...)
		for _, alg := range []string{"radix", "pdqsort"} {
			b.Run(fmt.Sprintf("keys=%s/%s", keys, alg), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					copy(buf.idx, saved)
					buf.sorted = false
					if alg == "radix" {
						buf.sort()
					} else {
						buf.sortPDQ()
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
			})
		}
		buf.release()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// sortPDQ is sort by slices.SortFunc, the reference the radix sort is
// benchmarked against.
func (b *sortBuffer) sortPDQ() {
	slices.SortFunc(b.idx, b.cmp)
	b.sorted = true
}

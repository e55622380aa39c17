package arrow

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// itemsFile writes n random items in batches of 64Ki rows.
func itemsFile(t testing.TB, n int) (string, []Item) {
	rng := rand.New(rand.NewPCG(1, 1))
	items := randItems(rng, n, func() int64 { return rng.Int64() })
	p := filepath.Join(t.TempDir(), "items.arrow")
	write(t, NewSink[Item](p), 0, 1, items)
	return p, items
}

func TestReadAllocs(t *testing.T) {
	p, items := itemsFile(t, 20000)
	src, err := Open[Item](p)
	if err != nil {
		t.Fatal(err)
	}
	splits, _ := src.Splits(context.Background())
	rows := 0
	allocs := testing.AllocsPerRun(3, func() {
		rows = 0
		src.Read(context.Background(), splits[0], func(b []Item) error { rows += len(b); return nil })
	})
	if rows != len(items) || allocs/float64(rows) > 0.02 {
		t.Fatalf("%v allocs for %d rows", allocs, rows)
	}
	t.Logf("Read: %v allocs for %d rows", allocs, rows)
}

func TestWriteAllocs(t *testing.T) {
	_, items := itemsFile(t, 5000)
	w, err := NewSinkWith[Item](filepath.Join(t.TempDir(), "o.arrow"), SinkOptions{BatchRows: 1 << 20}).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.Write(items) // grow the builders
	allocs := testing.AllocsPerRun(3, func() { w.Write(items) })
	if allocs/float64(len(items)) > 0.02 {
		t.Fatalf("Write: %v allocs for %d rows", allocs, len(items))
	}
	t.Logf("Write: %v allocs for %d rows", allocs, len(items))
}

func BenchmarkRead(b *testing.B) {
	p, items := itemsFile(b, 200000)
	src, err := Open[Item](p)
	if err != nil {
		b.Fatal(err)
	}
	splits, _ := src.Splits(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, sp := range splits {
			src.Read(context.Background(), sp, func([]Item) error { return nil })
		}
	}
	b.ReportMetric(float64(len(items))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkWrite(b *testing.B) {
	_, items := itemsFile(b, 200000)
	out := filepath.Join(b.TempDir(), "o.arrow")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		write(b, NewSink[Item](out), 0, 1, items)
	}
	b.ReportMetric(float64(len(items))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

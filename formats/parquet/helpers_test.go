package parquet

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

const tpchDir = "../../testdata/tpch"

// readAll reads every split of a source in order.
func readAll[T any](t testing.TB, path string, opts ...Option) []T {
	t.Helper()
	src, err := Open[T](path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := readSource(src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readSource[T any](src *Source[T]) ([]T, error) {
	ctx := context.Background()
	splits, err := src.Splits(ctx)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, sp := range splits {
		if err := src.Read(ctx, sp, func(b []T) error { out = append(out, b...); return nil }); err != nil {
			return out, err
		}
	}
	return out, nil
}

// readParallel reads the splits from workers goroutines at once, each taking
// splits from a shared queue, and returns the rows per split in split order.
func readParallel[T any](t testing.TB, src *Source[T], workers int) []T {
	t.Helper()
	ctx := context.Background()
	splits, err := src.Splits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parts := make([][]T, len(splits))
	errs := make([]error, len(splits))
	next := make(chan int, len(splits))
	for i := range splits {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				errs[i] = src.Read(ctx, splits[i], func(b []T) error { parts[i] = append(parts[i], b...); return nil })
			}
		})
	}
	wg.Wait()
	var out []T
	for i := range parts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		out = append(out, parts[i]...)
	}
	return out
}

// writeGeneric writes rows with parquet-go to a new file in t's temporary
// directory, with the writer's options, and returns its path.
func writeGeneric[T any](t testing.TB, name string, rows []T, opts ...pq.WriterOption) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pq.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

package csv

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/weirdata/weir/formats"
)

// readAll reads every split of src in order, keeping the records (strings and
// pointers must stay valid after each callback).
func readAll[T any](t testing.TB, src *Source[T]) ([]T, error) {
	t.Helper()
	ctx := context.Background()
	splits, err := src.Splits(ctx)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, sp := range splits {
		err := src.Read(ctx, sp, func(b []T) error {
			out = append(out, b...)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// readParallel reads all splits at once, one goroutine each.
func readParallel[T any](t testing.TB, src *Source[T]) []T {
	t.Helper()
	splits, err := src.Splits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parts := make([][]T, len(splits))
	errs := make([]error, len(splits))
	var wg sync.WaitGroup
	for i, sp := range splits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = src.Read(context.Background(), sp, func(b []T) error {
				parts[i] = append(parts[i], b...)
				return nil
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return slices.Concat(parts...)
}

func mustOpen[T any](t testing.TB, path string, o Options) *Source[T] {
	t.Helper()
	src, err := Open[T](path, o)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func writeFile(t testing.TB, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeAll writes rows with one writer of sink into path.
func writeAll[T any](t testing.TB, sink formats.Sink[T], rows []T) {
	t.Helper()
	w, err := sink.Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for b := range slices.Chunk(rows, 100) {
		if err := w.Write(b); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	if len(rows) == 0 {
		w.Write(nil)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// assertOnly checks dir holds exactly the named files (no temporaries).
func assertOnly(t testing.TB, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Fatalf("%s holds %q, want %q", dir, got, names)
	}
}

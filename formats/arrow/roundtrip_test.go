package arrow

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/weirdata/weir/formats"
)

type Price float64

// Item has a field of every supported kind.
type Item struct {
	ID    int64
	Small int8
	U     uint16
	Name  string
	Price Price
	F32   float32
	Flag  bool
	At    time.Time
	When  *time.Time
	Qty   *int32
	Note  *string
	Raw   []byte
	Ok    *bool
	Big   uint64
}

func ptrEq[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func equalItems(a, b Item) bool {
	return a.ID == b.ID && a.Small == b.Small && a.U == b.U && a.Name == b.Name && a.Price == b.Price &&
		a.F32 == b.F32 && a.Flag == b.Flag && a.At.Equal(b.At) &&
		(a.When == nil) == (b.When == nil) && (a.When == nil || a.When.Equal(*b.When)) &&
		ptrEq(a.Qty, b.Qty) && ptrEq(a.Note, b.Note) && ptrEq(a.Ok, b.Ok) &&
		(a.Raw == nil) == (b.Raw == nil) && string(a.Raw) == string(b.Raw) && a.Big == b.Big
}

var words = []string{"", "a", "héllo 世界", "with,comma", "quote\"", "line\nbreak"}

func randItems(rng *rand.Rand, n int, key func() int64) []Item {
	out := make([]Item, n)
	for i := range out {
		it := Item{
			ID: key(), Small: int8(rng.IntN(256) - 128), U: uint16(rng.Uint32()),
			Name: words[rng.IntN(len(words))], Price: Price(rng.NormFloat64()), F32: rng.Float32(),
			Flag: rng.IntN(2) == 0, At: time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).UTC(), Big: rng.Uint64(),
		}
		if rng.IntN(3) > 0 {
			w := time.Unix(rng.Int64N(4e9), 0).UTC()
			it.When = &w
		}
		if rng.IntN(3) > 0 {
			q := int32(rng.Uint32())
			it.Qty = &q
		}
		if rng.IntN(3) > 0 {
			s := words[rng.IntN(len(words))]
			it.Note = &s
		}
		if rng.IntN(3) > 0 {
			it.Raw = []byte(words[rng.IntN(len(words))])
		}
		if rng.IntN(3) > 0 {
			ok := rng.IntN(2) == 0
			it.Ok = &ok
		}
		if i == 3 {
			it.Big, it.Small, it.Price = math.MaxUint64, math.MinInt8, Price(math.Inf(-1))
		}
		out[i] = it
	}
	return out
}

func checkItems(t *testing.T, what string, got, want []Item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !equalItems(got[i], want[i]) {
			t.Fatalf("%s: row %d:\n got %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

func readAll[T any](t testing.TB, src *Source[T]) ([]T, error) {
	t.Helper()
	splits, err := src.Splits(context.Background())
	if err != nil {
		return nil, err
	}
	var out []T
	for _, sp := range splits {
		if err := src.Read(context.Background(), sp, func(b []T) error { out = append(out, b...); return nil }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

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
			errs[i] = src.Read(context.Background(), sp, func(b []T) error { parts[i] = append(parts[i], b...); return nil })
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

func write[T any](t testing.TB, sink formats.Sink[T], i, n int, rows []T) {
	t.Helper()
	w, err := sink.Create(context.Background(), i, n)
	if err != nil {
		t.Fatal(err)
	}
	for b := range slices.Chunk(rows, 50) {
		if err := w.Write(b); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	w.Abort() // a no-op after Commit
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	zipf := rand.NewZipf(rng, 1.2, 1, 100)
	keys := map[string]func() int64{
		"zipf":      func() int64 { return int64(zipf.Uint64()) },
		"all equal": func() int64 { return 1 },
	}
	for kname, key := range keys {
		for _, n := range []int{0, 1, 500} {
			for _, batch := range []int{1, 64, 0} {
				want := randItems(rng, n, key)
				dir := t.TempDir()
				p := filepath.Join(dir, "items.arrow")
				write(t, NewSinkWith[Item](p, SinkOptions{BatchRows: batch}), 0, 1, want)
				if ents, _ := os.ReadDir(dir); len(ents) != 1 {
					t.Fatalf("%d files beside the output", len(ents))
				}
				src, err := Open[Item](p)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s rows %d batch %d", kname, n, batch)
				got, err := readAll(t, src)
				if err != nil {
					t.Fatal(err)
				}
				checkItems(t, what, got, want)
				checkItems(t, what+" parallel", readParallel(t, src), want)
				checkWithFileReader(t, p, want)
			}
		}
	}
}

// checkWithFileReader reads p with arrow-go's ipc.FileReader directly.
func checkWithFileReader(t *testing.T, p string, want []Item) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Schema().Field(0).Name; got != "ID" {
		t.Fatalf("first column %q", got)
	}
	row := 0
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		names := rec.Column(3).(*array.String)
		notes := rec.Column(10).(*array.String)
		for j := range int(rec.NumRows()) {
			w := want[row]
			if ids.Value(j) != w.ID || names.Value(j) != w.Name || notes.IsNull(j) != (w.Note == nil) || (w.Note != nil && notes.Value(j) != *w.Note) {
				t.Fatalf("ipc.FileReader row %d differs: %d %q vs %+v", row, ids.Value(j), names.Value(j), w)
			}
			row++
		}
	}
	if row != len(want) {
		t.Fatalf("ipc.FileReader read %d rows, want %d", row, len(want))
	}
}

func TestParallelSink(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	dir := filepath.Join(t.TempDir(), "out")
	sink := NewSinkWith[Item](dir, SinkOptions{BatchRows: 40})
	const n = 3
	parts := make([][]Item, n)
	var wg sync.WaitGroup
	for i := range n {
		parts[i] = randItems(rng, 100*i+1, func() int64 { return int64(i) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			write(t, sink, i, n, parts[i])
		}()
	}
	wg.Wait()
	ents, _ := os.ReadDir(dir)
	if len(ents) != n || ents[0].Name() != "part-00000.arrow" {
		t.Fatalf("output %v", ents)
	}
	src, err := Open[Item](dir)
	if err != nil {
		t.Fatal(err)
	}
	checkItems(t, "parallel sink", readParallel(t, src), slices.Concat(parts...))
}

func TestAbort(t *testing.T) {
	dir := t.TempDir()
	w, err := NewSink[Item](filepath.Join(dir, "x.arrow")).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(randItems(rand.New(rand.NewPCG(1, 1)), 10, func() int64 { return 1 }))
	w.Abort()
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("abort left %v", ents)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	if _, err := NewSink[struct{ M map[int]int }](filepath.Join(dir, "y.arrow")).Create(context.Background(), 0, 1); err == nil {
		t.Fatal("unsupported type accepted")
	}
}

func TestCommitFailure(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "x.arrow")
	os.MkdirAll(filepath.Join(final, "sub"), 0o755)
	w, err := NewSink[Item](final).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(randItems(rand.New(rand.NewPCG(1, 1)), 3, func() int64 { return 1 }))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/arrow: commit "+final) {
		t.Fatalf("commit: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %v", ents)
	}
}

func TestTimestampRange(t *testing.T) {
	type Row struct{ At time.Time }
	dir := t.TempDir()
	w, err := NewSink[Row](filepath.Join(dir, "t.arrow")).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]Row{{time.Unix(0, math.MinInt64)}, {time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}}); err == nil || !strings.Contains(err.Error(), "outside the nanosecond timestamp range") {
		t.Fatalf("write: %v", err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "t.arrow") {
		t.Fatalf("close after a failed write: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("commit after a failed write succeeded")
	}
	w.Abort()
}

// TestTwoPhaseCommit walks a writer through Close, Commit, Abort and Remove in
// their allowed and refused orders, checking what the directory holds.
func TestTwoPhaseCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	final := filepath.Join(dir, "x.arrow")
	rows := randItems(rand.New(rand.NewPCG(2, 2)), 20, func() int64 { return 1 })
	create := func() formats.Writer[Item] {
		w, err := NewSinkWith[Item](final, SinkOptions{BatchRows: 7}).Create(ctx, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		return w
	}
	names := func() []string {
		var out []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}

	// Close then Abort leaves nothing.
	w := create()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 1 || got[0] == "x.arrow" {
		t.Fatalf("after Close: %v, want one temporary file", got)
	}
	w.Abort()
	w.Abort()
	if got := names(); len(got) != 0 {
		t.Fatalf("Close then Abort left %v", got)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}

	// Commit without Close is an error naming the file and publishes nothing.
	w = create()
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/arrow: commit "+final) {
		t.Fatalf("Commit without Close: %v", err)
	}
	w.Abort()
	if got := names(); len(got) != 0 {
		t.Fatalf("Commit without Close, then Abort, left %v", got)
	}

	// Close then Commit publishes the file; nothing is visible before Commit.
	w = create()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err == nil || !strings.Contains(err.Error(), final) {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("second Close succeeded")
	}
	if _, err := os.Stat(final); !os.IsNotExist(err) {
		t.Fatalf("the final file exists before Commit: %v", err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("second Commit succeeded")
	}
	w.Abort() // a no-op after Commit
	if got := names(); !slices.Equal(got, []string{"x.arrow"}) {
		t.Fatalf("after Commit: %v", got)
	}
	src, err := Open[Item](final)
	if err != nil {
		t.Fatal(err)
	}
	checkItems(t, "two-phase commit", readParallel(t, src), rows)
	if err := w.(formats.Remover).Remove(); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 0 {
		t.Fatalf("after Remove: %v", got)
	}
}

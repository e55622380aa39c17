package csv

import (
	"context"
	stdcsv "encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	Day   time.Time
	At    *time.Time
	Qty   *int32
	Note  *string
	Raw   []byte
	Ok    *bool
}

func equalItems(a, b Item) bool {
	eqp := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return a.ID == b.ID && a.Small == b.Small && a.U == b.U && a.Name == b.Name &&
		(a.Price == b.Price || (math.IsNaN(float64(a.Price)) && math.IsNaN(float64(b.Price)))) &&
		a.F32 == b.F32 && a.Flag == b.Flag && a.Day.Equal(b.Day) && eqp(a.At, b.At) &&
		ptrEq(a.Qty, b.Qty) && ptrEq(a.Note, b.Note) && ptrEq(a.Ok, b.Ok) &&
		(a.Raw == nil) == (b.Raw == nil) && string(a.Raw) == string(b.Raw)
}

func ptrEq[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

var nasty = []string{"", " ", "plain", "a,b", "q\"uote", "\"", "multi\nline", "tab\t", "#hash", "NULL", "héllo 世界 🙂", " lead", "trail ", "cr\rx"}

func randItems(rng *rand.Rand, n int, keys func() int64) []Item {
	items := make([]Item, n)
	for i := range items {
		it := Item{
			ID:    keys(),
			Small: int8(rng.IntN(256) - 128),
			U:     uint16(rng.Uint32()),
			Name:  nasty[rng.IntN(len(nasty))] + strconv.Itoa(rng.IntN(3)),
			Price: Price(rng.NormFloat64() * 1e6),
			F32:   float32(rng.Float64()),
			Flag:  rng.IntN(2) == 0,
			Day:   time.Date(1990+rng.IntN(40), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC),
		}
		if rng.IntN(3) > 0 {
			at := time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).In(time.FixedZone("", 3600*(rng.IntN(5)-2)))
			it.At = &at
		}
		if rng.IntN(3) > 0 {
			q := int32(rng.Uint32())
			it.Qty = &q
		}
		if rng.IntN(3) > 0 {
			s := nasty[rng.IntN(len(nasty))]
			it.Note = &s
		}
		if rng.IntN(3) > 0 {
			it.Raw = []byte(nasty[rng.IntN(len(nasty))])
		}
		if rng.IntN(3) > 0 {
			ok := rng.IntN(2) == 0
			it.Ok = &ok
		}
		if i%50 == 0 {
			it.Price = Price(math.Inf(1))
		}
		items[i] = it
	}
	return items
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

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(rng, 1.3, 1, 1000)
	keys := map[string]func() int64{
		"zipf":      func() int64 { return int64(zipf.Uint64()) },
		"all equal": func() int64 { return 42 },
		"unique":    func() int64 { return rng.Int64() },
	}
	opts := []Options{
		{},
		{NullString: "NULL", Delimiter: ';', Comment: '#', TrimSpace: true},
		{NoHeader: true, Delimiter: '\t'},
	}
	for kname, key := range keys {
		for oi, o := range opts {
			for _, n := range []int{0, 1, 700} {
				want := randItems(rng, n, key)
				p := filepath.Join(t.TempDir(), "items.csv")
				writeAll(t, NewSink[Item](p, o), want)
				assertOnly(t, filepath.Dir(p), "items.csv")
				for _, split := range []int64{1, 333, 1 << 30} {
					o := o
					o.SplitSize, o.BatchRows, o.ChunkSize, o.NonFinite = split, 64, 2048, true
					src := mustOpen[Item](t, p, o)
					got, err := readAll(t, src)
					if err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("%s opts %d rows %d split %d", kname, oi, n, split)
					checkItems(t, what, got, want)
					checkItems(t, what+" parallel", readParallel(t, src), want)
				}
				if oi == 0 {
					compareEncodingCSV(t, p, want)
				}
			}
		}
	}
}

// compareEncodingCSV parses the file written with default options with
// encoding/csv and checks the text of a few columns.
func compareEncodingCSV(t *testing.T, p string, want []Item) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := stdcsv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(want)+1 || recs[0][0] != "ID" || recs[0][12] != "Ok" {
		t.Fatalf("encoding/csv: %d records, header %q", len(recs), recs[0])
	}
	for i, it := range want {
		r := recs[i+1]
		note := ""
		if it.Note != nil {
			note = *it.Note
		}
		if r[0] != strconv.FormatInt(it.ID, 10) || r[3] != strings.ReplaceAll(it.Name, "\r\n", "\n") || r[10] != note || r[11] != string(it.Raw) {
			t.Fatalf("encoding/csv row %d: %q vs %+v", i, r, it)
		}
	}
}

func TestParallelSink(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := filepath.Join(t.TempDir(), "out")
	sink := NewSink[Item](dir, Options{})
	const n = 4
	parts := make([][]Item, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		parts[i] = randItems(rng, 100*i, func() int64 { return int64(i) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := sink.Create(context.Background(), i, n)
			if err != nil {
				errs[i] = err
				return
			}
			if err := w.Write(parts[i]); err != nil {
				w.Abort()
				errs[i] = err
				return
			}
			if errs[i] = w.Close(); errs[i] == nil {
				errs[i] = w.Commit()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	assertOnly(t, dir, "part-00000.csv", "part-00001.csv", "part-00002.csv", "part-00003.csv")
	got := readParallel(t, mustOpen[Item](t, dir, Options{SplitSize: 1000, NonFinite: true}))
	checkItems(t, "parallel sink", got, slices.Concat(parts...))
}

func TestAbort(t *testing.T) {
	dir := t.TempDir()
	w, err := NewSink[Item](filepath.Join(dir, "x.csv"), Options{}).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(randItems(rand.New(rand.NewPCG(1, 1)), 10, func() int64 { return 1 }))
	w.Abort()
	w.Abort()
	assertOnly(t, dir)
	if err := w.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	if _, err := NewSink[struct{ C chan int }](filepath.Join(dir, "y.csv"), Options{}).Create(context.Background(), 0, 1); err == nil {
		t.Fatal("unsupported type accepted")
	}
	assertOnly(t, dir)
}

// TestCommitFailure makes the rename fail (the final name is a non-empty
// directory): Commit reports it and leaves no temporary file.
func TestCommitFailure(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "x.csv")
	os.MkdirAll(filepath.Join(final, "sub"), 0o755)
	w, err := NewSink[Three](final, Options{}).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]Three{{"a", "b", "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/csv: commit "+final) {
		t.Fatalf("commit: %v", err)
	}
	w.Abort()
	assertOnly(t, dir, "x.csv")
}

// TestTwoPhaseCommit walks a writer through Close, Commit, Abort and Remove in
// their allowed and refused orders, checking what the directory holds.
func TestTwoPhaseCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	final := filepath.Join(dir, "x.csv")
	rows := []Three{{"a", "b", "c"}, {"d", "e", "f"}}
	create := func() formats.Writer[Three] {
		w, err := NewSink[Three](final, Options{}).Create(ctx, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		return w
	}

	// Close then Abort leaves nothing.
	w := create()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() == "x.csv" {
		t.Fatalf("after Close: %v, want one temporary file", ents)
	}
	w.Abort()
	w.Abort()
	assertOnly(t, dir)
	if err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}

	// Commit without Close is an error naming the file and publishes nothing.
	w = create()
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/csv: commit "+final) {
		t.Fatalf("Commit without Close: %v", err)
	}
	w.Abort()
	assertOnly(t, dir)

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
	assertOnly(t, dir, "x.csv")
	if b, err := os.ReadFile(final); err != nil || string(b) != "A,B,C\na,b,c\nd,e,f\n" {
		t.Fatalf("committed %q, %v", b, err)
	}
	if err := w.(formats.Remover).Remove(); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir)
}

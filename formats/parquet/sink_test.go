package parquet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/weirdata/weir/formats"
)

// wide covers every supported field type, NULLs through pointers.
type wide struct {
	I8   int8      `weir:"i8"`
	I16  int16     `weir:"i16"`
	I32  int32     `weir:"i32"`
	I64  int64     `weir:"i64"`
	U8   uint8     `weir:"u8"`
	U64  uint64    `weir:"u64"`
	F32  float32   `weir:"f32"`
	F64  float64   `weir:"f64"`
	B    bool      `weir:"b"`
	S    string    `weir:"s"`
	Raw  []byte    `weir:"raw"`
	D    Date      `weir:"d"`
	TS   time.Time `weir:"ts"`
	Dec  Decimal   `weir:"dec,scale=3"`
	PI   *int64    `weir:"pi"`
	PS   *string   `weir:"ps"`
	PD   *Date     `weir:"pd"`
	PDec *Decimal  `weir:"pdec,scale=2"`
}

func makeWide(n int, keys func(i int) int64) []wide {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]wide, n)
	for i := range out {
		k := keys(i)
		w := wide{
			I8: int8(k), I16: int16(k), I32: int32(k), I64: k, U8: uint8(k), U64: uint64(k) << 40,
			F32: float32(k) / 4, F64: float64(k) * 1.5, B: k%2 == 0,
			S: fmt.Sprintf("s%d", k), Raw: []byte{byte(k), byte(k >> 8)},
			D:   Date(k%20000 - 3000),
			TS:  time.Unix(k*3600-1e8, int64(rng.IntN(1e9))).UTC(),
			Dec: NewDecimal(k*7-500, 3),
		}
		if i%3 != 0 {
			v, s, d := k, strings.Repeat("x", int(k%5)), Date(k)
			w.PI, w.PS, w.PD = &v, &s, &d
			w.PDec = &Decimal{Unscaled: k, Scale: 2}
		}
		out[i] = w
	}
	return out
}

func equalWide(a, b wide) bool {
	eqp := func(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqs := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqd := func(x, y *Date) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqm := func(x, y *Decimal) bool { return x == nil && y == nil || x != nil && y != nil && x.Cmp(*y) == 0 }
	return a.I8 == b.I8 && a.I16 == b.I16 && a.I32 == b.I32 && a.I64 == b.I64 && a.U8 == b.U8 && a.U64 == b.U64 &&
		a.F32 == b.F32 && a.F64 == b.F64 && a.B == b.B && a.S == b.S && string(a.Raw) == string(b.Raw) &&
		a.D == b.D && a.TS.Equal(b.TS) && a.Dec.Cmp(b.Dec) == 0 && eqp(a.PI, b.PI) && eqs(a.PS, b.PS) && eqd(a.PD, b.PD) && eqm(a.PDec, b.PDec)
}

func writeAll[T any](t testing.TB, path string, rows []T, batch int, opts ...SinkOption) {
	t.Helper()
	w, err := NewSink[T](path, opts...).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(rows); i += batch {
		if err := w.Write(rows[i:min(i+batch, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func zipfKeys(n int) func(int) int64 {
	z := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.2, 1, 1000)
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(z.Uint64())
	}
	return func(i int) int64 { return keys[i] }
}

// wideOracle reads a wide file with parquet-go's generic reader.
type wideOracle struct {
	I64 int64   `parquet:"i64"`
	S   string  `parquet:"s"`
	F64 float64 `parquet:"f64"`
	PI  *int64  `parquet:"pi,optional"`
}

func TestSinkRoundTrip(t *testing.T) {
	dir := t.TempDir()
	inputs := map[string][]wide{
		"empty":     nil,
		"one":       makeWide(1, func(i int) int64 { return 42 }),
		"sequence":  makeWide(5000, func(i int) int64 { return int64(i) }),
		"all-equal": makeWide(3000, func(i int) int64 { return 7 }),
		"zipf":      makeWide(5000, zipfKeys(5000)),
	}
	codecs := map[string]Codec{"zstd": Zstd, "snappy": Snappy, "gzip": Gzip, "none": Uncompressed}
	for name, rows := range inputs {
		for cname, codec := range codecs {
			path := filepath.Join(dir, name+"-"+cname+".parquet")
			writeAll(t, path, rows, 333, WithCodec(codec), RowGroupRows(1000))
			for _, batch := range []int{1, 100, DefaultBatchRows} {
				src, err := Open[wide](path, BatchRows(batch))
				if err != nil {
					t.Fatal(err)
				}
				got := readParallel(t, src, 3)
				if len(got) != len(rows) {
					t.Fatalf("%s/%s: %d rows, want %d", name, cname, len(got), len(rows))
				}
				for i := range rows {
					if !equalWide(got[i], rows[i]) {
						t.Fatalf("%s/%s batch %d row %d:\n got %+v\nwant %+v", name, cname, batch, i, got[i], rows[i])
					}
				}
			}
			if len(rows) == 0 {
				continue
			}
			checkRowGroups(t, path, len(rows), 1000)
			ora := genericRead[wideOracle](t, path)
			for i := range rows {
				o, w := ora[i], rows[i]
				if o.I64 != w.I64 || o.S != w.S || o.F64 != w.F64 || (o.PI == nil) != (w.PI == nil) || o.PI != nil && *o.PI != *w.PI {
					t.Fatalf("%s/%s: generic reader row %d = %+v, want %+v", name, cname, i, o, w)
				}
			}
		}
	}
	assertOnly(t, dir, len(inputs)*len(codecs))
}

// checkRowGroups checks that the file at path holds rows rows in row groups
// of size rows each but the last, which holds the rest.
func checkRowGroups(t testing.TB, path string, rows, size int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	groups := pf.RowGroups()
	if want := (rows + size - 1) / size; len(groups) != want {
		t.Fatalf("%s: %d row groups, want %d", path, len(groups), want)
	}
	for i, g := range groups {
		if want := min(size, rows-i*size); g.NumRows() != int64(want) {
			t.Errorf("%s: row group %d holds %d rows, want %d", path, i, g.NumRows(), want)
		}
	}
}

// assertOnly checks dir holds n entries and no temporary file.
func assertOnly(t testing.TB, dir string, n int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if len(ents) != n {
		t.Errorf("%s holds %d entries, want %d", dir, len(ents), n)
	}
}

func TestSinkLargeValues(t *testing.T) {
	type blob struct {
		K int64  `weir:"k"`
		V string `weir:"v"`
	}
	rows := make([]blob, 20)
	for i := range rows {
		rows[i] = blob{K: int64(i), V: strings.Repeat(string(rune('a'+i)), 50000+i)} // far beyond a 4 KiB segment
	}
	path := filepath.Join(t.TempDir(), "blob.parquet")
	writeAll(t, path, rows, 3)
	if got := readAll[blob](t, path, BatchRows(4)); !slices.Equal(got, rows) {
		t.Fatal("large values differ")
	}
}

func TestSinkAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	s := NewSink[Region](path)
	w, err := s.Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]Region{{RegionKey: 1, Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("file visible before Commit: %v", err)
	}
	w.Abort()
	w.Abort()
	assertOnly(t, dir, 0)
	if err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}

	w, err = s.Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]Region{{RegionKey: 1, Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/parquet: commit "+path) {
		t.Fatalf("Commit without Close: %v", err)
	}
	if got := tempFiles(t, dir); got != 1 {
		t.Fatalf("%d temporary files before Close, want 1", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("file visible before Commit: %v", err)
	}
	if err := w.Write([]Region{{RegionKey: 2}}); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("second Close succeeded")
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil {
		t.Fatal("second Commit succeeded")
	}
	w.Abort() // no-op after Commit
	assertOnly(t, dir, 1)
	if got := readAll[Region](t, path); len(got) != 1 || got[0].Name != "x" {
		t.Fatalf("got %+v", got)
	}

	// A Decimal that loses digits at the column's scale aborts the writer.
	type money struct {
		M Decimal `weir:"m"`
	}
	mp := filepath.Join(dir, "money.parquet")
	mw, err := NewSink[money](mp).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := mw.Write([]money{{NewDecimal(12345, 3)}}); err == nil || !strings.Contains(err.Error(), "money.parquet") {
		t.Fatalf("lossy decimal: %v", err)
	}
	assertOnly(t, dir, 1)
}

// TestSinkCloseAbort checks that Abort after a successful Close removes the
// closed temporary file, that a committed file can be removed, and that a
// failing rename names the file and leaves no temporary file.
func TestSinkCloseAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	w, err := NewSink[Region](path).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]Region{{RegionKey: 1, Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := tempFiles(t, dir); got != 1 {
		t.Fatalf("%d temporary files after Close, want 1", got)
	}
	w.Abort()
	w.Abort()
	assertOnly(t, dir, 0)
	if err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}

	writeAll(t, path, []Region{{RegionKey: 1}}, 1)
	assertOnly(t, dir, 1)
	w, err = NewSink[Region](path).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.(formats.Remover).Remove(); err != nil {
		t.Fatal(err)
	}
	assertOnly(t, dir, 0)

	// The rename fails: the final name is a non-empty directory.
	if err := os.MkdirAll(filepath.Join(path, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err = NewSink[Region](path).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "formats/parquet: commit "+path) {
		t.Fatalf("failing rename: %v", err)
	}
	w.Abort()
	assertOnly(t, dir, 1) // the directory
}

// tempFiles counts the temporary (dot) files in dir.
func tempFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

func TestSinkParts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rows := makeWide(4000, func(i int) int64 { return int64(i) })
	const n = 4
	s := NewSink[wide](dir, WithCodec(Snappy))
	errs := make(chan error, n)
	for i := range n {
		go func() {
			w, err := s.Create(context.Background(), i, n)
			if err != nil {
				errs <- err
				return
			}
			part := rows[i*len(rows)/n : (i+1)*len(rows)/n]
			if err := w.Write(part); err != nil {
				errs <- err
				return
			}
			if err := w.Close(); err != nil {
				errs <- err
				return
			}
			errs <- w.Commit()
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", i))); err != nil {
			t.Fatal(err)
		}
	}
	assertOnly(t, dir, n)
	for _, in := range []string{dir, filepath.Join(dir, "part-*.parquet")} {
		got := readAll[wide](t, in)
		if len(got) != len(rows) {
			t.Fatalf("%s: %d rows, want %d", in, len(got), len(rows))
		}
		for i := range rows {
			if !equalWide(got[i], rows[i]) {
				t.Fatalf("%s row %d differs", in, i)
			}
		}
	}
}

// TestSinkWriteAllocs checks that Write does not allocate per row once its
// row buffers exist (parquet-go allocates per page and row group).
func TestSinkWriteAllocs(t *testing.T) {
	rows := makeWide(2000, func(i int) int64 { return int64(i) })
	w, err := NewSink[wide](filepath.Join(t.TempDir(), "a.parquet"), WithCodec(Uncompressed)).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations per Write of %d rows", allocs, len(rows))
	if allocs > float64(len(rows))/10 {
		t.Fatalf("%.0f allocations for %d rows", allocs, len(rows))
	}
}

// TestSinkSameBytesAsWriteRows checks that the sink, which hands each column
// writer its values directly, writes the file parquet-go's row path writes:
// the oracle assembles every row of the same schema and values and writes
// them with pq.Writer.WriteRows, a batch at a time, with the same codec and
// row group size.
func TestSinkSameBytesAsWriteRows(t *testing.T) {
	dir := t.TempDir()
	for name, rows := range map[string][]wide{
		// row groups of several pages (parquet-go cuts pages at 256 KiB)
		"sequence": makeWide(120_000, func(i int) int64 { return int64(i) }),
		"zipf":     makeWide(4321, zipfKeys(4321)),
	} {
		for _, batch := range []int{1, 333, 1024, 5000} {
			if batch == 1 && len(rows) > 10_000 {
				continue // slow, and covered by the small input
			}
			got := filepath.Join(dir, fmt.Sprintf("%s-%d.parquet", name, batch))
			writeAll(t, got, rows, batch, RowGroupRows(50_000))
			want := filepath.Join(dir, fmt.Sprintf("%s-%d-rows.parquet", name, batch))
			writeByRows(t, want, rows, batch, 50_000)
			a, err := os.ReadFile(got)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a, b) {
				t.Errorf("%s, batches of %d: the sink wrote %d bytes, WriteRows %d, not the same", name, batch, len(a), len(b))
			}
		}
	}
}

// writeByRows writes rows to path as NewSink's schema with Zstd, assembling
// each row and writing them with pq.Writer.WriteRows, batch rows at a time.
func writeByRows[T any](t *testing.T, path string, rows []T, batch int, rgRows int64) {
	t.Helper()
	fields, err := formats.Fields[T]()
	if err != nil {
		t.Fatal(err)
	}
	group := pq.Group{}
	encs := make([]encodeFunc, len(fields))
	for k, fl := range fields {
		node, enc, err := nodeFor(fl.Type, fl.Opts)
		if err != nil {
			t.Fatal(err)
		}
		group[fl.Column], encs[k] = node, enc
	}
	schema := pq.NewSchema("weir", group)
	leaves := make([]int, len(fields))
	for k, fl := range fields {
		for leaf, p := range schema.Columns() {
			if len(p) == 1 && p[0] == fl.Column {
				leaves[k] = leaf
			}
		}
	}
	cfg, err := pq.NewWriterConfig(schema, pq.Compression(&zstd.Codec{}), pq.MaxRowsPerRowGroup(rgRows))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pw := pq.NewWriter(f, cfg)
	for i := 0; i < len(rows); i += batch {
		var out []pq.Row
		for r := i; r < min(i+batch, len(rows)); r++ {
			row := make(pq.Row, len(fields))
			for k, fl := range fields {
				v, ok := encs[k](unsafe.Add(unsafe.Pointer(&rows[r]), fl.Offset))
				if !ok {
					t.Fatalf("row %d field %s cannot be encoded", r, fl.GoName)
				}
				def := 0
				if fl.Type.Kind() == reflect.Pointer && !v.IsNull() {
					def = 1
				}
				row[leaves[k]] = v.Level(0, def, leaves[k])
			}
			out = append(out, row)
		}
		if _, err := pw.WriteRows(out); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
}

package parquet

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
)

// encRow is written by parquet-go's own writer with the encodings and
// logical types DuckDB and other writers use.
type encRow struct {
	A int64   `parquet:"a,delta"`
	B int32   `parquet:"b,dict"`
	C string  `parquet:"c,dict"`
	D string  `parquet:"d,delta"`
	E float64 `parquet:"e,split"`
	F int64   `parquet:"f,timestamp(millisecond)"`
	G int64   `parquet:"g,timestamp(microsecond:local)"`
	H int32   `parquet:"h,date"`
	I uint32  `parquet:"i"`
	J [4]byte `parquet:"j"`
	K bool    `parquet:"k"`
	L float32 `parquet:"l"`
	M int64   `parquet:"m,decimal(3:18)"`
	N *int64  `parquet:"n,optional,dict"`
	O int64   `parquet:"o,timestamp(nanosecond)"`
	P bool    `parquet:"p,optional"` // parquet-go writes false as NULL
}

// encRead reads encRow with weir's conversions.
type encRead struct {
	A int64     `weir:"a"`
	B int16     `weir:"b"`
	C string    `weir:"c"`
	D []byte    `weir:"d"`
	E float64   `weir:"e"`
	F time.Time `weir:"f"`
	G time.Time `weir:"g"`
	H time.Time `weir:"h"`
	I uint64    `weir:"i"`
	J string    `weir:"j"`
	K bool      `weir:"k"`
	L float32   `weir:"l"`
	M Decimal   `weir:"m"`
	N *int64    `weir:"n"`
	O time.Time `weir:"o"`
	P *bool     `weir:"p"`
}

func TestEncodings(t *testing.T) {
	rows := make([]encRow, 9000)
	for i := range rows {
		k := int64(i)
		rows[i] = encRow{
			A: k*k - 5000, B: int32(i % 17), C: []string{"AIR", "MAIL", "SHIP"}[i%3], D: string(rune('a'+i%26)) + "xyz"[:i%4],
			E: float64(i) / 3, F: k*1000 - 7, G: k * 1_000_003, H: int32(i%3000 - 1000), I: 1<<31 + uint32(i),
			J: [4]byte{byte(i), 1, 2, byte(i >> 8)}, K: i%5 == 0, L: float32(i) / 8, M: k*37 - 100000,
			O: k*1_000_000_007 - 3,
		}
		if i%7 != 0 {
			v := k % 11
			rows[i].N = &v
		}
	}
	for _, version := range []int{1, 2} {
		path := filepath.Join(t.TempDir(), "enc.parquet")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := pq.NewGenericWriter[encRow](f, pq.DataPageVersion(version), pq.PageBufferSize(2048), pq.MaxRowsPerRowGroup(4000))
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		for _, batch := range []int{1, 333, DefaultBatchRows} {
			got := readAll[encRead](t, path, BatchRows(batch))
			if len(got) != len(rows) {
				t.Fatalf("v%d: %d rows", version, len(got))
			}
			for i, w := range rows {
				g := got[i]
				ok := g.A == w.A && int32(g.B) == w.B && g.C == w.C && string(g.D) == w.D && g.E == w.E &&
					g.F.Equal(time.UnixMilli(w.F)) && g.G.Equal(time.UnixMicro(w.G)) &&
					g.H.Equal(time.Unix(int64(w.H)*86400, 0)) && g.I == uint64(w.I) &&
					g.J == string(w.J[:]) && g.K == w.K && g.L == w.L && g.M == NewDecimal(w.M, 3) &&
					(g.N == nil) == (w.N == nil) && (g.N == nil || *g.N == *w.N) &&
					g.O.Equal(time.Unix(0, w.O)) && (g.P == nil) == !w.P && (g.P == nil || *g.P) &&
					g.F.Location() == time.UTC && g.H.Location() == time.UTC
				if !ok {
					t.Fatalf("v%d batch %d row %d:\n got %+v\nwant %+v", version, batch, i, g, w)
				}
			}
		}
		type alt struct {
			H Date    `weir:"h"`
			M float64 `weir:"m"`
		}
		for i, a := range readAll[alt](t, path) {
			if a.H != Date(rows[i].H) || a.M != float64(rows[i].M)/1000 {
				t.Fatalf("row %d: %+v", i, a)
			}
		}
		// Filters on several physical and logical types.
		got := readAll[encRead](t, path, Where("c", Eq, "MAIL"), Where("i", Ge, uint32(1<<31+100)),
			Where("f", Lt, time.UnixMilli(5000*1000)), Where("m", Gt, NewDecimal(-1, 0)), Where("e", Le, 4000.0), Where("l", Ge, 0.1))
		var want int
		for _, w := range rows {
			if w.C == "MAIL" && w.I >= 1<<31+100 && w.F < 5000*1000 && w.M > -1000 && w.E <= 4000 && w.L >= float32(0.1) {
				want++
			}
		}
		if len(got) != want || want == 0 {
			t.Fatalf("v%d: filters kept %d rows, want %d", version, len(got), want)
		}
	}
}

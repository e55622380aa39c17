package parquet

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

const sf01Lineitem = "/work/shared/tpch/sf0.1/lineitem.parquet"

// q1Cols are the 7 columns TPC-H Q1 reads, with money as unscaled INT64.
type q1Cols struct {
	Quantity      Decimal `weir:"l_quantity"`
	ExtendedPrice Decimal `weir:"l_extendedprice"`
	Discount      Decimal `weir:"l_discount"`
	Tax           Decimal `weir:"l_tax"`
	ReturnFlag    string  `weir:"l_returnflag"`
	LineStatus    string  `weir:"l_linestatus"`
	ShipDate      Date    `weir:"l_shipdate"`
}

// q1Generic is q1Cols for parquet-go's GenericReader.
type q1Generic struct {
	Quantity      int64  `parquet:"l_quantity,optional"`
	ExtendedPrice int64  `parquet:"l_extendedprice,optional"`
	Discount      int64  `parquet:"l_discount,optional"`
	Tax           int64  `parquet:"l_tax,optional"`
	ReturnFlag    string `parquet:"l_returnflag,optional"`
	LineStatus    string `parquet:"l_linestatus,optional"`
	ShipDate      int32  `parquet:"l_shipdate,optional"`
}

// allGeneric is Lineitem for parquet-go's GenericReader.
type allGeneric struct {
	OrderKey      int64  `parquet:"l_orderkey,optional"`
	PartKey       int64  `parquet:"l_partkey,optional"`
	SuppKey       int64  `parquet:"l_suppkey,optional"`
	LineNumber    int64  `parquet:"l_linenumber,optional"`
	Quantity      int64  `parquet:"l_quantity,optional"`
	ExtendedPrice int64  `parquet:"l_extendedprice,optional"`
	Discount      int64  `parquet:"l_discount,optional"`
	Tax           int64  `parquet:"l_tax,optional"`
	ReturnFlag    string `parquet:"l_returnflag,optional"`
	LineStatus    string `parquet:"l_linestatus,optional"`
	ShipDate      int32  `parquet:"l_shipdate,optional"`
	CommitDate    int32  `parquet:"l_commitdate,optional"`
	ReceiptDate   int32  `parquet:"l_receiptdate,optional"`
	ShipInstruct  string `parquet:"l_shipinstruct,optional"`
	ShipMode      string `parquet:"l_shipmode,optional"`
	Comment       string `parquet:"l_comment,optional"`
}

func benchSource[T any](b *testing.B, path string) {
	src, err := Open[T](path)
	if err != nil {
		b.Fatal(err)
	}
	st, _ := src.Stats(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := scan(src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(st.Rows), "ns/row")
}

// scan reads every split on one goroutine and counts rows without keeping them.
func scan[T any](src *Source[T]) (int, error) {
	ctx := context.Background()
	splits, _ := src.Splits(ctx)
	n := 0
	for _, sp := range splits {
		if err := src.Read(ctx, sp, func(b []T) error { n += len(b); return nil }); err != nil {
			return n, err
		}
	}
	return n, nil
}

func benchGeneric[R any](b *testing.B, path string) {
	b.ReportAllocs()
	rows := 0
	buf := make([]R, 4096)
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r := pq.NewGenericReader[R](f)
		rows = 0
		for {
			n, err := r.Read(buf)
			rows += n
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
		f.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}

func needSF01(b *testing.B) {
	if _, err := os.Stat(sf01Lineitem); err != nil {
		b.Skip("no SF 0.1 lineitem:", err)
	}
}

func BenchmarkScanQ1(b *testing.B)       { needSF01(b); benchSource[q1Cols](b, sf01Lineitem) }
func BenchmarkScanAll(b *testing.B)      { needSF01(b); benchSource[Lineitem](b, sf01Lineitem) }
func BenchmarkGenericQ1(b *testing.B)    { needSF01(b); benchGeneric[q1Generic](b, sf01Lineitem) }
func BenchmarkGenericAll(b *testing.B)   { needSF01(b); benchGeneric[allGeneric](b, sf01Lineitem) }
func BenchmarkScanQ1SF001(b *testing.B)  { benchSource[q1Cols](b, tpchDir+"/lineitem.parquet") }
func BenchmarkScanAllSF001(b *testing.B) { benchSource[Lineitem](b, tpchDir+"/lineitem.parquet") }

// TestReadAllocs checks that decoding allocates per page and per batch, not
// per row: numeric columns only, so no string slabs.
func TestReadAllocs(t *testing.T) {
	type nums struct {
		OrderKey int64   `weir:"l_orderkey"`
		Price    Decimal `weir:"l_extendedprice"`
		Discount float64 `weir:"l_discount"`
		ShipDate Date    `weir:"l_shipdate"`
	}
	src, err := Open[nums](tpchDir + "/lineitem.parquet")
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	allocs := testing.AllocsPerRun(3, func() {
		n, err := scan(src)
		if err != nil {
			t.Fatal(err)
		}
		rows = n
	})
	t.Logf("%.0f allocations for %d rows (%.4f per row)", allocs, rows, allocs/float64(rows))
	if allocs/float64(rows) > 0.02 {
		t.Fatalf("%.0f allocations for %d rows", allocs, rows)
	}
}

// benchParallel reads the splits from 2 goroutines taking them from a queue,
// as the runtime does on 2 cores.
func benchParallel[T any](b *testing.B, path string) {
	src, err := Open[T](path)
	if err != nil {
		b.Fatal(err)
	}
	st, _ := src.Stats(context.Background())
	splits, _ := src.Splits(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		next := make(chan int, len(splits))
		for i := range splits {
			next <- i
		}
		close(next)
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				var err error
				for i := range next {
					if e := src.Read(context.Background(), splits[i], func([]T) error { return nil }); e != nil {
						err = e
					}
				}
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(st.Rows), "ns/row")
}

func BenchmarkScanQ1Parallel(b *testing.B)  { needSF01(b); benchParallel[q1Cols](b, sf01Lineitem) }
func BenchmarkScanAllParallel(b *testing.B) { needSF01(b); benchParallel[Lineitem](b, sf01Lineitem) }

// rankRow is the row of BenchmarkSinkRanks: PageRank's output.
type rankRow struct {
	ID   int64   `weir:"id"`
	Rank float64 `weir:"rank"`
}

// BenchmarkSinkRanks writes 1M (id, rank) rows, ids ascending and ranks
// pseudo-random, in batches of 1024 through one writer: the output of the
// PageRank job at scale 20.
func BenchmarkSinkRanks(b *testing.B) {
	const n, batch = 1 << 20, 1024
	rows := make([]rankRow, n)
	x := uint64(1)
	for i := range rows {
		x = x*6364136223846793005 + 1442695040888963407
		rows[i] = rankRow{ID: int64(i), Rank: float64(x>>11) / (1 << 53) / n}
	}
	path := b.TempDir() + "/ranks.parquet"
	b.SetBytes(16 * n)
	for b.Loop() {
		w, err := NewSink[rankRow](path).Create(context.Background(), 0, 1)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += batch {
			if err := w.Write(rows[i : i+batch]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if err := w.(interface{ Commit() error }).Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size()), "file-bytes")
	}
}

package duckdb

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/weirdata/weir/formats/parquet"
)

type written struct {
	ID     int64           `weir:"id"`
	Name   string          `weir:"name"`
	Price  parquet.Decimal `weir:"price,scale=2"`
	Ratio  float64         `weir:"ratio"`
	Day    parquet.Date    `weir:"day"`
	Flag   bool            `weir:"flag"`
	Maybe  *int32          `weir:"maybe"`
	Amount float32         `weir:"amount"`
}

// TestDuckDBReadsWeirParquet writes a table with weir's Parquet sink under each
// codec, as one file and as a directory of parts, and checks that DuckDB reads
// back the same rows.
func TestDuckDBReadsWeirParquet(t *testing.T) {
	rows := make([]written, 5000)
	for i := range rows {
		rows[i] = written{
			ID:     int64(i) - 100,
			Name:   fmt.Sprintf("name-%d-é", i%97),
			Price:  parquet.NewDecimal(int64(i*37%100000), 2),
			Ratio:  float64(i) / 7,
			Day:    parquet.MakeDate(1995, 1, 1) + parquet.Date(i%1000),
			Flag:   i%3 == 0,
			Amount: float32(i) / 4,
		}
		if i%5 != 0 {
			v := int32(i)
			rows[i].Maybe = &v
		}
	}
	var wantSum float64
	var wantNulls int
	for _, r := range rows {
		wantSum += r.Price.Float64()
		if r.Maybe == nil {
			wantNulls++
		}
	}
	for _, codec := range []parquet.Codec{parquet.Zstd, parquet.Snappy, parquet.Gzip, parquet.Uncompressed} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("%v/%d", codec, parts), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "t.parquet")
				sink := parquet.NewSink[written](path, parquet.WithCodec(codec), parquet.RowGroupRows(1000))
				for i := 0; i < parts; i++ {
					w, err := sink.Create(context.Background(), i, parts)
					if err != nil {
						t.Fatal(err)
					}
					lo, hi := len(rows)*i/parts, len(rows)*(i+1)/parts
					if err := w.Write(rows[lo:hi]); err != nil {
						t.Fatal(err)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					if err := w.Commit(); err != nil {
						t.Fatal(err)
					}
				}
				glob := path
				if parts > 1 {
					glob = filepath.Join(path, "*.parquet")
				}
				db := newDuckDB(t, 1)
				var n, nulls, flags int
				var sum, ratio float64
				var minDay, name string
				q := fmt.Sprintf(`SELECT count(*), sum(price), count(*) - count(maybe), sum(CASE WHEN flag THEN 1 ELSE 0 END),
					sum(ratio), CAST(min(day) AS VARCHAR), min(name) FROM read_parquet('%s')`, glob)
				if err := db.QueryRow(q).Scan(&n, &sum, &nulls, &flags, &ratio, &minDay, &name); err != nil {
					t.Fatal(err)
				}
				var wantRatio float64
				wantFlags := 0
				for _, r := range rows {
					wantRatio += r.Ratio
					if r.Flag {
						wantFlags++
					}
				}
				if n != len(rows) || math.Abs(sum-wantSum) > 0.005 || nulls != wantNulls || flags != wantFlags ||
					math.Abs(ratio-wantRatio) > 1e-6*wantRatio || minDay != "1995-01-01" || name != "name-0-é" {
					t.Errorf("DuckDB read n=%d sum=%v nulls=%d flags=%d ratio=%v minDay=%s name=%q; want %d %v %d %d %v 1995-01-01 name-0-é",
						n, sum, nulls, flags, ratio, minDay, name, len(rows), wantSum, wantNulls, wantFlags, wantRatio)
				}
			})
		}
	}
}

package tpch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/parquet"
)

// The variants rewrite tables of the SF 0.01 data to reach the paths the
// DuckDB answers do not: empty inputs, all-equal and zipf-skewed join and
// grouping keys, and records larger than a memory segment. weir's answer is
// compared with the naive oracle's over the same rewritten tables.

// variant is a data directory derived from SF 0.01.
type variant struct {
	name string
	// rewrite changes the database in place; the tables it reports changed
	// are written, the others linked to the SF 0.01 files.
	rewrite func(d *db) []string
}

var variants = []variant{
	{"empty-lineitem", func(d *db) []string {
		d.lines = nil
		return []string{"lineitem"}
	}},
	{"equal-keys", func(d *db) []string {
		// One order of 1993 Q4 (Q10's window), one PROMO part, one supplier:
		// every join and group sees a single key.
		var order oOrder
		for _, o := range d.orders {
			if o.OrderDate >= parquet.MakeDate(1993, 10, 1) && o.OrderDate < parquet.MakeDate(1994, 1, 1) {
				order = o
				break
			}
		}
		var part int64
		for _, p := range d.parts {
			if strings.HasPrefix(p.Type, "PROMO") {
				part = p.PartKey
				break
			}
		}
		for i := range d.lines {
			d.lines[i].OrderKey, d.lines[i].PartKey, d.lines[i].SuppKey = order.OrderKey, part, d.supps[0].SuppKey
		}
		return []string{"lineitem"}
	}},
	{"zipf-keys", func(d *db) []string {
		r := rand.New(rand.NewPCG(7, 11))
		zo := rand.NewZipf(r, 1.2, 1, uint64(len(d.orders)-1))
		zp := rand.NewZipf(r, 1.2, 1, uint64(len(d.parts)-1))
		zs := rand.NewZipf(r, 1.2, 1, uint64(len(d.supps)-1))
		for i := range d.lines {
			l := &d.lines[i]
			l.OrderKey = d.orders[zo.Uint64()].OrderKey
			l.PartKey = d.parts[zp.Uint64()].PartKey
			l.SuppKey = d.supps[zs.Uint64()].SuppKey
		}
		return []string{"lineitem"}
	}},
	{"large-records", func(d *db) []string {
		// Customer comments of 5 KiB and more: Q10 carries them through a
		// join, a sort and First with 4 KiB segments.
		for i := range d.custs {
			c := &d.custs[i]
			c.Comment = strings.Repeat(c.Comment+"|", 5<<10/len(c.Comment)+1)
		}
		return []string{"customer"}
	}},
}

// writeTable writes rows as <dir>/<table>.parquet.
func writeTable[T any](t *testing.T, dir, table string, rows []T) {
	t.Helper()
	w, err := parquet.NewSink[T](filepath.Join(dir, table+".parquet")).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// build writes the variant's data directory and returns it with the
// rewritten database.
func (v variant) build(t *testing.T, base *db) (string, *db) {
	t.Helper()
	d := &db{
		lines: append([]oLine(nil), base.lines...), orders: base.orders,
		custs: append([]oCustomer(nil), base.custs...), parts: base.parts,
		supps: base.supps, nations: base.nations, regions: base.regions,
	}
	changed := v.rewrite(d)
	dir := t.TempDir()
	for _, table := range []string{"lineitem", "orders", "customer", "part", "supplier", "nation", "region"} {
		switch {
		case !contains(changed, table):
			abs, err := filepath.Abs(filepath.Join(sf001, table+".parquet"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, table+".parquet")); err != nil {
				t.Fatal(err)
			}
		case table == "lineitem":
			writeTable(t, dir, table, d.lines)
		case table == "customer":
			writeTable(t, dir, table, d.custs)
		default:
			t.Fatalf("variant %s: cannot write %s", v.name, table)
		}
	}
	return dir, d
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func TestQueryVariants(t *testing.T) {
	base := loadDB(t, sf001)
	cs := []config{configs[0], configs[len(configs)-1]}
	if testing.Short() { // the race run: the parallel configuration
		cs = cs[1:]
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			dir, d := v.build(t, base)
			for _, n := range oracleQueries {
				s, _ := Query(n)
				want := append([][]string{s.Columns}, d.oracle(n)...)
				for _, c := range cs {
					t.Run(fmt.Sprintf("q%02d/%s", n, c.name), func(t *testing.T) {
						compare(t, run(t, c, dir, n), want)
					})
				}
			}
		})
	}
}

package parquet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func copyFile(t testing.TB, from, to string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	src := tpchDir + "/lineitem.parquet"
	cases := map[string]func([]byte) []byte{
		"text.parquet":      func([]byte) []byte { return []byte("l_orderkey,l_partkey\n1,2\n") },
		"empty.parquet":     func([]byte) []byte { return nil },
		"truncated.parquet": func(b []byte) []byte { return b[:len(b)/2] },
		"footer.parquet": func(b []byte) []byte {
			b = append([]byte(nil), b...)
			for i := len(b) - 400; i < len(b)-8; i++ {
				b[i] ^= 0x5a
			}
			return b
		},
		"magic.parquet": func(b []byte) []byte {
			b = append([]byte(nil), b...)
			copy(b[len(b)-4:], "PAR2")
			return b
		},
	}
	for name, edit := range cases {
		path := filepath.Join(dir, name)
		copyFile(t, src, path, edit)
		_, err := Open[Lineitem](path)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestCorruptPages damages column data behind an intact footer: Read must
// fail naming file, row group and column, never panic.
func TestCorruptPages(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(tpchDir + "/lineitem.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{4, 100, 5000, 300000, 900000} {
		bad := append([]byte(nil), b...)
		for i := off; i < off+64; i++ {
			bad[i] = byte(i * 31)
		}
		path := filepath.Join(dir, "corrupt.parquet")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open[Lineitem](path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readSource(src)
		if err != nil && !strings.Contains(err.Error(), "corrupt.parquet row group") {
			t.Errorf("offset %d: error does not name file and row group: %v", off, err)
		}
		t.Logf("offset %d: %v", off, err)
	}
}

func TestTypeMismatch(t *testing.T) {
	type bad1 struct {
		Mode int64 `weir:"l_shipmode"`
	}
	type bad2 struct {
		Price int64 `weir:"l_extendedprice"` // DECIMAL(15,2) into an integer
	}
	type bad3 struct {
		Date time.Time `weir:"l_orderkey"`
	}
	type missing struct {
		Nope int64
	}
	check := func(err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: does not mention %q", err, w)
			}
		}
	}
	_, err := Open[bad1](tpchDir + "/lineitem.parquet")
	check(err, "lineitem.parquet", "l_shipmode", "BYTE_ARRAY", "int64")
	_, err = Open[bad2](tpchDir + "/lineitem.parquet")
	check(err, "lineitem.parquet", "l_extendedprice", "DECIMAL", "int64")
	_, err = Open[bad3](tpchDir + "/lineitem.parquet")
	check(err, "l_orderkey", "time.Time")
	_, err = Open[missing](tpchDir + "/lineitem.parquet")
	check(err, "lineitem.parquet", "Nope")
}

func TestNulls(t *testing.T) {
	type in struct {
		K *int64   `weir:"k"`
		S *string  `weir:"s"`
		D *Decimal `weir:"d,scale=2"`
	}
	type ptrs struct {
		K *int64   `weir:"k"`
		S *string  `weir:"s"`
		D *Decimal `weir:"d"`
	}
	type vals struct {
		K int64   `weir:"k"`
		S string  `weir:"s"`
		D float64 `weir:"d"`
	}
	rows := make([]in, 100)
	for i := range rows {
		if i%4 != 3 {
			k, s := int64(i), "v"
			rows[i] = in{K: &k, S: &s, D: &Decimal{Unscaled: int64(i), Scale: 2}}
		}
	}
	path := filepath.Join(t.TempDir(), "nulls.parquet")
	writeAll(t, path, rows, 10)
	got := readAll[ptrs](t, path, BatchRows(7))
	for i := range rows {
		if (got[i].K == nil) != (i%4 == 3) || got[i].K != nil && (*got[i].K != int64(i) || *got[i].S != "v" || got[i].D.Unscaled != int64(i)) {
			t.Fatalf("row %d: %+v", i, got[i])
		}
	}
	src, err := Open[vals](path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = readSource(src)
	if err == nil || !strings.Contains(err.Error(), "nulls.parquet row group 0, row 3, column k") {
		t.Fatalf("NULL into int64: %v", err)
	}
	zero := readAll[vals](t, path, NullAsZero())
	for i := range rows {
		w := vals{}
		if i%4 != 3 {
			w = vals{K: int64(i), S: "v", D: float64(i) / 100}
		}
		if zero[i] != w {
			t.Fatalf("row %d: %+v, want %+v", i, zero[i], w)
		}
	}
}

func TestRangeChecked(t *testing.T) {
	type wideInt struct {
		K int64 `weir:"k"`
	}
	type narrow struct {
		K int8 `weir:"k"`
	}
	type unsigned struct {
		K uint32 `weir:"k"`
	}
	path := filepath.Join(t.TempDir(), "ints.parquet")
	writeAll(t, path, []wideInt{{1}, {-5}, {127}, {300}}, 10)
	src, _ := Open[narrow](path)
	got, err := readSource(src)
	if err == nil || !strings.Contains(err.Error(), "row 3, column k") {
		t.Fatalf("300 into int8: %v", err)
	}
	usrc, _ := Open[unsigned](path)
	if _, err := readSource(usrc); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("-5 into uint32: %v", err)
	}
	_ = got
}

func TestInputs(t *testing.T) {
	if _, err := Open[Region](filepath.Join(t.TempDir(), "none.parquet")); err == nil {
		t.Fatal("missing file accepted")
	}
	if _, err := Open[Region](t.TempDir()); err == nil {
		t.Fatal("empty directory accepted")
	}
	if _, err := Open[Region](tpchDir + "/nomatch-*.parquet"); err == nil {
		t.Fatal("empty glob accepted")
	}
	// A glob over two tables with the same shape: nation and region share no
	// columns, so only region matches a region-shaped struct.
	got := readAll[Region](t, tpchDir+"/region*.parquet")
	if len(got) != 5 {
		t.Fatalf("%d regions", len(got))
	}
	// A foreign split and a cancelled context are errors.
	a, _ := Open[Region](tpchDir + "/region.parquet")
	b, _ := Open[Region](tpchDir + "/region.parquet")
	sp, _ := a.Splits(context.Background())
	if err := b.Read(context.Background(), sp[0], func([]Region) error { return nil }); err == nil {
		t.Fatal("foreign split accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Read(ctx, sp[0], func([]Region) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	stop := errors.New("stop")
	if err := a.Read(context.Background(), sp[0], func([]Region) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("callback error: %v", err)
	}
}

// TestCallbackPanic checks that a panic in the callback is not mistaken for
// corrupt data: it reaches the caller, and the next Read still works.
func TestCallbackPanic(t *testing.T) {
	src, err := Open[Region](tpchDir + "/region.parquet")
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := src.Splits(context.Background())
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v", p)
			}
		}()
		_ = src.Read(context.Background(), sp[0], func([]Region) error { panic("boom") })
	}()
	if got, err := readSource(src); err != nil || len(got) != 5 {
		t.Fatalf("after panic: %d rows, %v", len(got), err)
	}
}

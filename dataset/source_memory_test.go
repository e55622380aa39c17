package dataset

import (
	"context"
	"testing"

	"github.com/weirdata/weir/formats"
	"github.com/weirdata/weir/formats/parquet"
)

// plainSource hides a source's ReadMemory.
type plainSource[T any] struct{ formats.Source[T] }

// TestSourceDecodeMemoryReserved reads a Parquet file with its decode buffers
// reserved: the job's peak managed memory covers them, a source that declares
// none peaks lower, and the job ends with every reservation released (the
// manager's Close fails the job otherwise).
func TestSourceDecodeMemoryReserved(t *testing.T) {
	src, err := parquet.Open[nationRow]("../testdata/tpch/nation.parquet")
	if err != nil {
		t.Fatal(err)
	}
	splits, err := src.Splits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var most int64
	for _, sp := range splits {
		most = max(most, src.ReadMemory(sp))
	}
	if most <= 0 {
		t.Fatalf("ReadMemory = %d", most)
	}
	peak := func(s formats.Source[nationRow]) int64 {
		env := New(Options{Parallelism: 2, Memory: 256 << 20})
		n := Count(FromSource(env, "nation", s))
		res, err := env.Execute(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n.N() != 25 {
			t.Fatalf("read %d nations, want 25", n.N())
		}
		return res.Metrics.PeakMemory
	}
	with, without := peak(src), peak(plainSource[nationRow]{src})
	t.Logf("peak %d with decode buffers of %d, %d without", with, most, without)
	if with < most || with-without < most {
		t.Errorf("peak %d with decode buffers of %d, %d without: the buffers were not reserved", with, most, without)
	}
}

package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/weirdata/weir/internal/cli"
)

// sortInput returns the cached benchmark input of WEIR_BENCH_SORT_BYTES bytes
// (default 256 MiB), generating it on first use.
func sortInput(b *testing.B) (path string, size int64) {
	size = 256 << 20
	if s := os.Getenv("WEIR_BENCH_SORT_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("WEIR_BENCH_SORT_BYTES=%q is not a positive number of bytes", s)
		}
		size = n
	}
	size = size / cli.LineLen * cli.LineLen
	dir := filepath.Join(os.TempDir(), "weir-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	path = filepath.Join(dir, fmt.Sprintf("lines-%d-seed1.txt", size))
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		return path, size
	}
	tmp := path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		b.Fatal(err)
	}
	if err := cli.WriteRandomLines(f, size, 1); err != nil {
		f.Close()
		os.Remove(tmp)
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path, size
}

// BenchmarkWeirSortVsGNU times `weir sort --memory 256MiB --parallelism 2`
// (in-process) and `LC_ALL=C sort -S 256M --parallel=2` (skipped if absent) on the
// same input, and checks that their outputs are equal.
func BenchmarkWeirSortVsGNU(b *testing.B) {
	in, size := sortInput(b)
	outDir := b.TempDir()
	weirOut := filepath.Join(outDir, "weir.txt")
	gnuOut := filepath.Join(outDir, "gnu.txt")
	b.Run("weir", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			var stderr bytes.Buffer
			code := cli.Execute(context.Background(), []string{"sort", "--input", in, "--output", weirOut,
				"--memory", "256MiB", "--parallelism", "2", "--tmp", b.TempDir()}, io.Discard, &stderr)
			if code != 0 {
				b.Fatalf("weir sort: exit %d: %s", code, stderr.String())
			}
		}
		b.ReportMetric(float64(size)/1e6/(b.Elapsed().Seconds()/float64(b.N)), "MB/s")
	})
	b.Run("gnu", func(b *testing.B) {
		bin, err := exec.LookPath("sort")
		if err != nil {
			b.Skip("no sort on PATH")
		}
		b.SetBytes(size)
		for b.Loop() {
			cmd := exec.Command(bin, "-S", "256M", "--parallel=2", "-T", b.TempDir(), "-o", gnuOut, in)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("sort: %v: %s", err, out)
			}
		}
		b.ReportMetric(float64(size)/1e6/(b.Elapsed().Seconds()/float64(b.N)), "MB/s")
	})
	if sameFile(weirOut, gnuOut) == 1 {
		b.Fatal("weir sort and LC_ALL=C sort wrote different outputs")
	}
}

// sameFile compares two files chunk by chunk: 0 equal, 1 different, -1 when one
// of them does not exist.
func sameFile(x, y string) int {
	fx, err := os.Open(x)
	if err != nil {
		return -1
	}
	defer fx.Close()
	fy, err := os.Open(y)
	if err != nil {
		return -1
	}
	defer fy.Close()
	bx, by := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		nx, errx := io.ReadFull(fx, bx)
		ny, erry := io.ReadFull(fy, by)
		if nx != ny || !bytes.Equal(bx[:nx], by[:ny]) {
			return 1
		}
		if errx != nil || erry != nil {
			if (errx == nil) != (erry == nil) {
				return 1
			}
			return 0
		}
	}
}

// TestSameFile checks the output comparison the benchmark relies on.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c, d := write("a", "x\ny\n"), write("b", "x\ny\n"), write("c", "x\nz\n"), write("d", "x\ny\nz\n")
	for _, tc := range []struct {
		x, y string
		want int
	}{{a, b, 0}, {a, c, 1}, {a, d, 1}, {d, a, 1}, {a, filepath.Join(dir, "missing"), -1}} {
		if got := sameFile(tc.x, tc.y); got != tc.want {
			t.Errorf("sameFile(%s, %s) = %d, want %d", filepath.Base(tc.x), filepath.Base(tc.y), got, tc.want)
		}
	}
}

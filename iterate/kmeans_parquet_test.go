package iterate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/formatstest"
	"github.com/weirdata/weir/formats/parquet"
)

// The Parquet output's rows of 1, 3 and 8 coordinates, as the test reads
// them back.
type clusteredRow1 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
}

type clusteredRow3 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
}

type clusteredRow8 struct {
	Cluster int64   `weir:"cluster"`
	X1      float64 `weir:"x1"`
	X2      float64 `weir:"x2"`
	X3      float64 `weir:"x3"`
	X4      float64 `weir:"x4"`
	X5      float64 `weir:"x5"`
	X6      float64 `weir:"x6"`
	X7      float64 `weir:"x7"`
	X8      float64 `weir:"x8"`
}

// TestKMeansParquetOutput: the Parquet output of RunKMeans holds, row for
// row, the lines of its text output (the oracle: the same job writing
// text), for points of 1, 3 and 8 coordinates, at parallelism 1 and 2; 9
// coordinates are refused.
func TestKMeansParquetOutput(t *testing.T) {
	for _, d := range []int{1, 3, 8, 9} {
		for _, par := range []int{1, 2} {
			t.Run(fmt.Sprintf("d=%d/p=%d", d, par), func(t *testing.T) {
				dir := t.TempDir()
				var pts, cs strings.Builder
				for i := range 300 {
					x := make([]string, d)
					for k := range x {
						x[k] = fmt.Sprint(float64((i*7+k*13)%50) + float64(i%3)*100)
					}
					fmt.Fprintf(&pts, "%s\n", strings.Join(x, " "))
					if i < 3 {
						fmt.Fprintf(&cs, "%d %s\n", i+1, strings.Join(x, " "))
					}
				}
				in := KMeansInputs{Points: filepath.Join(dir, "points.txt"), Centroids: filepath.Join(dir, "centroids.txt")}
				if err := os.WriteFile(in.Points, []byte(pts.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(in.Centroids, []byte(cs.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				ds := dataset.Options{Parallelism: par, TmpDir: dir}
				ctx := context.Background()
				var text bytes.Buffer
				if err := RunKMeans(ctx, Options{Dataset: ds, Stdout: &text}, in, 5); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, "out.parquet")
				err := RunKMeans(ctx, Options{Dataset: ds, Output: out}, in, 5)
				if d > 8 {
					if err == nil || !strings.Contains(err.Error(), "1 to 8 coordinates") {
						t.Fatalf("9 coordinates: %v, want a refusal", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				switch d {
				case 1:
					got = readRows(t, out, func(r clusteredRow1) string { return formatPoint(r.Cluster, []float64{r.X1}) })
				case 3:
					got = readRows(t, out, func(r clusteredRow3) string { return formatPoint(r.Cluster, []float64{r.X1, r.X2, r.X3}) })
				case 8:
					got = readRows(t, out, func(r clusteredRow8) string {
						return formatPoint(r.Cluster, []float64{r.X1, r.X2, r.X3, r.X4, r.X5, r.X6, r.X7, r.X8})
					})
				}
				want := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("Parquet rows (%d) differ from the text lines (%d):\n%q\n%q", len(got), len(want), head(got), head(want))
				}
			})
		}
	}
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// readRows reads the Parquet file path as rows of T, in order, each
// formatted by line.
func readRows[T any](t *testing.T, path string, line func(T) string) []string {
	t.Helper()
	src, err := parquet.Open[T](path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := formatstest.ReadAll(context.Background(), src, line)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package cli

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGenTPCHQueries generates SF 0.01 and runs TPC-H queries over it: the
// answers must be DuckDB's over its own dbgen's data (testdata/tpch/answers).
// Q1 reads lineitem's numbers, dates and flags; Q13 the order comments
// (NOT LIKE '%special%requests%') and the customer keys without orders.
func TestGenTPCHQueries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sf0.01")
	code, _, stderr := runWeir(context.Background(), "gen", "tpch", "--sf", "0.01", "--out", dir, "--parallelism", "2")
	if code != 0 {
		t.Fatalf("gen tpch: exit %d, stderr %q", code, stderr)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 8 {
		t.Errorf("%d files in %s, want the 8 tables", len(ents), dir)
	}
	for _, q := range []string{"1", "13"} {
		code, stdout, stderr := runWeir(context.Background(), "tpch", "--data", dir, "--query", q, "--parallelism", "2")
		if code != 0 {
			t.Fatalf("q%s: exit %d, stderr %q", q, code, stderr)
		}
		want, err := os.ReadFile(filepath.Join(tpchData, "answers", "sf0.01", "q"+pad2(q)+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		compareCSV(t, "q"+q, stdout, string(want))
	}
}

func pad2(q string) string {
	if len(q) == 1 {
		return "0" + q
	}
	return q
}

// compareCSV compares two CSV answers field by field: numbers within 0.01
// (absolute) or 1e-6 (relative), anything else exactly.
func compareCSV(t *testing.T, name, got, want string) {
	t.Helper()
	g := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	w := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	if len(g) != len(w) {
		t.Fatalf("%s: %d lines, want %d:\n%s", name, len(g), len(w), got)
	}
	for i := range w {
		gf, wf := strings.Split(g[i], ","), strings.Split(w[i], ",")
		if len(gf) != len(wf) {
			t.Errorf("%s line %d: %q, want %q", name, i+1, g[i], w[i])
			continue
		}
		for j := range wf {
			if gf[j] == wf[j] {
				continue
			}
			a, errA := strconv.ParseFloat(gf[j], 64)
			b, errB := strconv.ParseFloat(wf[j], 64)
			if errA != nil || errB != nil || math.Abs(a-b) > max(0.01, 1e-6*math.Abs(b)) {
				t.Errorf("%s line %d field %d: %q, want %q", name, i+1, j+1, gf[j], wf[j])
			}
		}
	}
}

func TestGenTPCHErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		name string
		args []string
		want []string // substrings of the one line on stderr
	}{
		{"sf zero", []string{"--sf", "0", "--out", out}, []string{"--sf 0", "0 < sf", "--help"}},
		{"sf negative", []string{"--sf", "-1", "--out", out}, []string{"--sf -1", "--help"}},
		{"sf not a number", []string{"--sf", "one", "--out", out}, []string{`--sf "one"`, "not a number", "--help"}},
		{"sf NaN", []string{"--sf", "NaN", "--out", out}, []string{"--sf NaN", "--help"}},
		{"sf too large", []string{"--sf", "30000", "--out", out}, []string{"--sf 30000", "--help"}},
		{"no sf", []string{"--out", out}, []string{"sf", "--help"}},
		{"no out", []string{"--sf", "0.01"}, []string{"out", "--help"}},
		{"unknown table", []string{"--sf", "0.01", "--out", out, "--tables", "lineitem,widgets"}, []string{`"widgets"`, "--help"}},
		{"negative parallelism", []string{"--sf", "0.01", "--out", out, "--parallelism", "-2"}, []string{"--parallelism -2", "--help"}},
		{"out is a file", []string{"--sf", "0.01", "--out", filepath.Join(file, "sub"), "--tables", "nation"}, []string{"gen tpch", "a-file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runWeir(context.Background(), append([]string{"gen", "tpch"}, c.args...)...)
			if code == 0 {
				t.Fatalf("exit 0, want an error")
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s exists after failed runs (%v)", out, err)
	}
	if os.Geteuid() != 0 { // root writes into read-only directories
		code, _, stderr := runWeir(context.Background(), "gen", "tpch", "--sf", "0.01", "--out", readOnly)
		if code == 0 || !strings.Contains(stderr, "permission denied") {
			t.Errorf("read-only --out: exit %d, stderr %q", code, stderr)
		}
		if ents, _ := os.ReadDir(readOnly); len(ents) != 0 {
			t.Errorf("files left in read-only --out: %v", ents)
		}
	}
}

// TestGenTPCHCancelled cancels a run: it fails and leaves no file (not even a
// temporary one) in the output directory.
func TestGenTPCHCancelled(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, _, stderr := runWeir(ctx, "gen", "tpch", "--sf", "0.01", "--out", out)
	if code == 0 || !strings.Contains(stderr, "canceled") {
		t.Fatalf("exit %d, stderr %q: want a cancellation error", code, stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("files left after a cancelled run: %v", ents)
	}
}

// TestGenTPCHTables writes only the tables asked for.
func TestGenTPCHTables(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := runWeir(context.Background(), "gen", "tpch", "--sf", "0.01", "--out", out, "--tables", "nation,region,supplier")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "nation.parquet region.parquet supplier.parquet" {
		t.Errorf("files %v, want nation, region and supplier", names)
	}
}

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/internal/oracle"
)

func TestQuickstart(t *testing.T) {
	keep := t.TempDir()
	tmp := t.TempDir()
	code, stdout, stderr := runWeir(context.Background(), "quickstart", "--size", "3MiB", "--memory", "256KiB",
		"--parallelism", "2", "--tmp", tmp, "--keep", keep)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"checked  equal to a naive in-memory computation (12 countries)",
		"plan:", "local=HYBRIDHASH_BUILD_SECOND", "local=HASH_AGGREGATE combine", ":RANGE/", "metrics:", "peak managed memory",
		"sorted   31457 lines", "checked  the output is in LC_ALL=C order",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "spilled  0 sorted runs") {
		t.Errorf("a 256KiB budget for 3MiB of lines spilled nothing:\n%s", stdout)
	}
	in, err := os.ReadFile(filepath.Join(keep, "lines.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(keep, "sorted.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, oracle.SortLines(in)) {
		t.Errorf("quickstart's sorted.txt differs from the oracle's sort of lines.txt")
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary directory not empty: %v", ents)
	}
}

func TestQuickstartRemovesItsFiles(t *testing.T) {
	tmp := t.TempDir()
	code, _, stderr := runWeir(context.Background(), "quickstart", "--size", "200KiB", "--tmp", tmp)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("quickstart left %v behind", ents)
	}
}

func TestLineChecksumCatchesDisorderAndLoss(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := lineChecksum(write("bad.txt", "a\nc\nb\n"), true); err == nil || !strings.Contains(err.Error(), "line 3 is out of order") {
		t.Errorf("unsorted file: err = %v", err)
	}
	a, _ := lineChecksum(write("a.txt", "x\ny\ny\n"), false)
	b, _ := lineChecksum(write("b.txt", "y\nx\ny"), false)
	c, _ := lineChecksum(write("c.txt", "x\ny\n"), true)
	if a != b {
		t.Errorf("same lines in another order: %v != %v", a, b)
	}
	if a == c {
		t.Errorf("a lost duplicate went unnoticed: %v == %v", a, c)
	}
}

func TestGenLines(t *testing.T) {
	dir := t.TempDir()
	p1, p2, p3 := filepath.Join(dir, "1.txt"), filepath.Join(dir, "2.txt"), filepath.Join(dir, "3.txt")
	for _, c := range [][]string{
		{"gen", "lines", "--out", p1, "--size", "10KB", "--seed", "7"},
		{"gen", "lines", "--out", p2, "--size", "10KB", "--seed", "7"},
		{"gen", "lines", "--out", p3, "--size", "10KB", "--seed", "8"},
	} {
		if code, _, stderr := runWeir(context.Background(), c...); code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", c, code, stderr)
		}
	}
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	b3, _ := os.ReadFile(p3)
	if len(b1) != 10000 || !bytes.Equal(b1, b2) || bytes.Equal(b1, b3) {
		t.Fatalf("sizes %d/%d/%d, same seed equal %v, other seed equal %v", len(b1), len(b2), len(b3), bytes.Equal(b1, b2), bytes.Equal(b1, b3))
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(b1, []byte("\n")), []byte("\n")) {
		if len(line) != LineLen-1 {
			t.Fatalf("line %d has %d bytes", i+1, len(line))
		}
		for _, c := range line {
			if c < ' ' || c > '~' {
				t.Fatalf("line %d holds byte %#x", i+1, c)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("temporary files left: %v", ents)
	}
	code, _, stderr := runWeir(context.Background(), "gen", "lines", "--out", filepath.Join(dir, "no", "such", "x.txt"), "--size", "1KB")
	checkFailure(t, code, stderr, "x.txt")
	code, _, stderr = runWeir(context.Background(), "gen", "lines", "--size", "1KB")
	checkFailure(t, code, stderr, "out")
}

func TestQuickstartJobMatchesOracleAcrossSettings(t *testing.T) {
	cs, orders := qsData(3)
	want := qsOracle(cs, orders)
	if len(want) != len(qsCountries) {
		t.Fatalf("oracle has %d countries", len(want))
	}
	// qsCheck must notice a wrong answer.
	bad := append([]qsRevenue(nil), want...)
	bad[2].Orders++
	if qsCheck(bad, want) == nil {
		t.Fatal("qsCheck accepted a wrong count")
	}
	for _, g := range []*globalOptions{
		{memory: 256 << 20, parallelism: 1},
		{memory: 128 << 10, parallelism: 3}, // forces the join and aggregations to spill
	} {
		var out strings.Builder
		g.tmp = t.TempDir()
		if err := runQuickstartJob(context.Background(), &out, dataset.Options{Parallelism: g.workers(), Memory: int64(g.memory), TmpDir: g.tmp}, t.TempDir()); err != nil {
			t.Fatalf("parallelism %d, memory %d: %v", g.parallelism, g.memory, err)
		}
		if ents, _ := os.ReadDir(g.tmp); len(ents) != 0 {
			t.Errorf("spill files left: %v", ents)
		}
	}
}

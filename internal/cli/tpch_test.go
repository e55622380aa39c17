package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tpchData is the SF 0.01 TPC-H data of the repository.
const tpchData = "../../testdata/tpch"

func TestTPCHQuery6(t *testing.T) {
	tmp := t.TempDir()
	code, stdout, stderr := runWeir(context.Background(), "tpch", "--data", tpchData, "--query", "6",
		"--parallelism", "2", "--memory", "1MiB", "--tmp", tmp)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "revenue" {
		t.Fatalf("stdout %q, want a header row \"revenue\" and one row", stdout)
	}
	// The answer of DuckDB over the same files: testdata/tpch/answers/sf0.01/q06.csv.
	if got, err := strconv.ParseFloat(lines[1], 64); err != nil || got < 1193053.2153 || got > 1193053.2353 {
		t.Errorf("revenue %q, want 1193053.2253", lines[1])
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("spill directory not empty: %v", ents)
	}
}

func TestTPCHQuery1HeaderAndOrder(t *testing.T) {
	code, stdout, stderr := runWeir(context.Background(), "tpch", "--data", tpchData, "--query", "1", "--parallelism", "1")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	want := []string{
		"l_returnflag,l_linestatus,sum_qty,sum_base_price,sum_disc_price,sum_charge,avg_qty,avg_price,avg_disc,count_order",
		"A,F,380456.00,", "N,F,8971.00,", "N,O,742802.00,", "R,F,381449.00,",
	}
	if len(lines) != len(want) {
		t.Fatalf("stdout has %d lines, want %d:\n%s", len(lines), len(want), stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], w)
		}
	}
}

func TestTPCHErrors(t *testing.T) {
	corrupt := t.TempDir()
	data, err := os.ReadFile(filepath.Join(tpchData, "lineitem.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// Keep the footer, overwrite the column chunks: Open succeeds, Read fails.
	for i := 4; i < len(data)/2; i++ {
		data[i] = byte(i * 7)
	}
	bad := filepath.Join(corrupt, "lineitem.parquet")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := t.TempDir()
	if err := os.WriteFile(filepath.Join(truncated, "lineitem.parquet"), data[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	for _, c := range []struct {
		name string
		args []string
		want []string // substrings of the one line on stderr
	}{
		{"no such query", []string{"--data", tpchData, "--query", "23"}, []string{"--query 23", "not implemented", "1, 2, 3, 4, 5", "20, 21, 22"}},
		{"query not a number", []string{"--data", tpchData, "--query", "x"}, []string{"--query"}},
		{"no query", []string{"--data", tpchData}, []string{"query"}},
		{"missing data dir", []string{"--data", missing, "--query", "6"}, []string{"--data", missing}},
		{"data is a file", []string{"--data", bad, "--query", "6"}, []string{"--data", bad, "not a directory"}},
		{"missing table", []string{"--data", truncated, "--query", "3"}, []string{filepath.Join(truncated, "customer.parquet")}},
		{"truncated parquet", []string{"--data", truncated, "--query", "6"}, []string{filepath.Join(truncated, "lineitem.parquet")}},
		{"corrupt parquet", []string{"--data", corrupt, "--query", "6"}, []string{bad}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			code, stdout, stderr := runWeir(context.Background(), append([]string{"tpch", "--tmp", tmp}, c.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stdout %q stderr %q", code, stdout, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "weir: ") {
				t.Errorf("stderr %q, want one line starting with \"weir: \"", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("spill directory not empty: %v", ents)
			}
		})
	}
}

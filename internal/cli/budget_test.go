package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		want int64
	}{
		{"4294967296\n", 4 << 30},
		{"max\n", 0},                 // cgroup v2 without a limit
		{"9223372036854771712\n", 0}, // cgroup v1 without a limit
		{"", 0}, {"-1\n", 0}, {"12x\n", 0},
	} {
		f := filepath.Join(dir, "limit")
		if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readLimit(f); got != tc.want {
			t.Errorf("readLimit(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if got := readLimit(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("readLimit of a missing file = %d, want 0", got)
	}
}

// TestDefaultMemory checks the default budget against the machine's memory as
// /proc/meminfo gives it: at most a quarter of it (a cgroup may lower it), at
// least MinDefaultMemory, in whole MiB, and what --help shows.
func TestDefaultMemory(t *testing.T) {
	got := DefaultMemory()
	if got < MinDefaultMemory || got%(1<<20) != 0 {
		t.Fatalf("DefaultMemory() = %d: want whole MiB, at least %d", got, MinDefaultMemory)
	}
	if runtime.GOOS == "linux" {
		total := memInfoTotal(t)
		if total/4 >= MinDefaultMemory && got > total/4 {
			t.Errorf("DefaultMemory() = %d, more than a quarter of MemTotal %d", got, total)
		}
		limited := false
		for _, f := range cgroupLimits {
			limited = limited || readLimit(f) > 0
		}
		if got > MinDefaultMemory && got < total/4-(1<<20) && !limited {
			t.Errorf("DefaultMemory() = %d, less than a quarter of MemTotal %d without a cgroup limit", got, total)
		}
	}
	root := NewRootCommand()
	for _, path := range [][]string{{"sort"}, {"tpch"}, {"run", "wordcount"}, {"explain", "kmeans"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if f := cmd.Flags().Lookup("memory"); f == nil || f.DefValue != Size(got).String() {
			t.Errorf("%v: --memory is %+v, want a default of %s", path, f, Size(got))
		}
	}
}

// memInfoTotal returns MemTotal from /proc/meminfo in bytes.
func memInfoTotal(t *testing.T) int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

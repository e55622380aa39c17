package cli

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
)

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
		limited := memory.CgroupLimit() > 0
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

// TestMemoryBoundsProcess checks how --memory splits: the Go runtime's soft
// limit is --memory itself from 64 MiB up, and the jobs' operators get it less
// the runtime's part, min(32 MiB, half).
func TestMemoryBoundsProcess(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	cmd := NewRootCommand()
	for _, c := range []struct{ memory, limit, managed int64 }{
		{256 << 20, 256 << 20, 224 << 20},
		{64 << 20, 64 << 20, 32 << 20},
		{16 << 20, 40 << 20, 8 << 20},
	} {
		g := &globalOptions{memory: Size(c.memory)}
		g.limitRuntime()
		if got := debug.SetMemoryLimit(-1); got != c.limit {
			t.Errorf("--memory %s: soft limit %d, want %d", Size(c.memory), got, c.limit)
		}
		opts, done := g.datasetOptions(cmd, "test")
		done()
		if opts.Memory != c.managed {
			t.Errorf("--memory %s: operators' budget %d, want %d", Size(c.memory), opts.Memory, c.managed)
		}
	}
}

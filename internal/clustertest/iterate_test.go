package clustertest

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestIterationsSpread: a JobManager and two TaskManagers of one slot; weir
// run's transitive-closure (a delta iteration), kmeans and
// linear-regression (bulk iterations with a loop-invariant input) at
// parallelism 2 run spread over both, their superstep barrier meeting
// across the processes, and write what an embedded run writes: the same
// pairs, the same centroids and model to a relative 1e-12.
func TestIterationsSpread(t *testing.T) {
	bin := weir(t)
	dir := t.TempDir()
	graph, points, samples := filepath.Join(dir, "graph"), filepath.Join(dir, "points"), filepath.Join(dir, "samples")
	for _, args := range [][]string{
		{"gen", "graph", "--out", graph, "--vertices", "512", "--edges", "600", "--seed", "7"},
		{"gen", "points", "--out", points, "--n", "20000", "--dims", "2", "--k", "4", "--seed", "7"},
		{"gen", "points", "--out", samples, "--kind", "regression", "--n", "20000", "--dims", "3", "--seed", "7"},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args, err, out)
		}
	}
	jobs := []struct {
		name string
		args []string
	}{
		{"transitive-closure", []string{"run", "transitive-closure", "--edges", filepath.Join(graph, "edges.txt")}},
		{"kmeans", []string{"run", "kmeans", "--points", filepath.Join(points, "points.txt"), "--centroids", filepath.Join(points, "centroids.txt"), "--iterations", "10"}},
		{"linear-regression", []string{"run", "linear-regression", "--input", filepath.Join(samples, "points.txt"), "--iterations", "10"}},
	}
	want := map[string]string{}
	for _, j := range jobs {
		out := filepath.Join(dir, j.name+"-embedded.txt")
		cmd := exec.Command(bin, append(j.args, "--output", out, "--parallelism", "2")...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("embedded %s: %v\n%s", j.name, err, msg)
		}
		want[j.name] = out
	}
	jm, rpcAddr, restURL := startJobManager(t, bin, t.TempDir())
	for _, id := range []string{"tm1", "tm2"} {
		start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "1", "--id", id, "--memory", "256MiB")
	}
	waitTaskManagers(t, restURL, 2)
	for i, j := range jobs {
		out := filepath.Join(dir, j.name+"-spread.txt")
		cmd := exec.Command(bin, append(j.args, "--output", out, "--parallelism", "2", "--jobmanager", restURL)...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("spread %s: %v\n%s", j.name, err, msg)
		}
		if n := strings.Count(jm.stderr.String(), "deployed spread over TaskManagers"); n != i+1 {
			t.Fatalf("%s: %d jobs ran spread, want %d", j.name, n, i+1)
		}
		compareNumbers(t, j.name, want[j.name], out)
	}
}

// compareNumbers fails t unless the files want and got hold the same
// lines of the same words, numbers equal to a relative 1e-12.
func compareNumbers(t *testing.T, name, want, got string) {
	t.Helper()
	read := func(path string) [][]string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var lines [][]string
		for l := range strings.Lines(string(b)) {
			lines = append(lines, strings.Fields(l))
		}
		return lines
	}
	w, g := read(want), read(got)
	if len(w) == 0 || len(w) != len(g) {
		t.Fatalf("%s: %d lines spread, %d embedded", name, len(g), len(w))
	}
	for i := range w {
		if len(w[i]) != len(g[i]) {
			t.Fatalf("%s: line %d: %q spread, %q embedded", name, i+1, g[i], w[i])
		}
		for k := range w[i] {
			if w[i][k] == g[i][k] {
				continue
			}
			a, errA := strconv.ParseFloat(w[i][k], 64)
			b, errB := strconv.ParseFloat(g[i][k], 64)
			if errA != nil || errB != nil || math.Abs(a-b) > 1e-12*math.Max(math.Abs(a), math.Abs(b)) {
				t.Fatalf("%s: line %d: %q spread, %q embedded", name, i+1, g[i], w[i])
			}
		}
	}
}

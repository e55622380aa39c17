package clustertest

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestIterationSpreadKill: a JobManager and three TaskManagers of one slot;
// weir run kmeans at parallelism 2 (150 supersteps) runs spread over two
// of them, and one of those two is killed with SIGKILL in the middle. The
// other share fails at the broken link, the attempt fails, and the
// JobManager runs the job again, spread over the two TaskManagers left;
// the job ends with exit 0 and writes what an embedded run writes.
func TestIterationSpreadKill(t *testing.T) {
	bin := weir(t)
	dir := t.TempDir()
	points := filepath.Join(dir, "points")
	if out, err := exec.Command(bin, "gen", "points", "--out", points, "--n", "300000", "--dims", "2", "--k", "8", "--seed", "3").CombinedOutput(); err != nil {
		t.Fatalf("gen points: %v\n%s", err, out)
	}
	args := []string{"run", "kmeans", "--points", filepath.Join(points, "points.txt"), "--centroids", filepath.Join(points, "centroids.txt"),
		"--iterations", "150", "--parallelism", "2"}
	embedded, spread := filepath.Join(dir, "embedded.txt"), filepath.Join(dir, "spread.txt")
	if out, err := exec.Command(bin, append(args, "--output", embedded)...).CombinedOutput(); err != nil {
		t.Fatalf("embedded: %v\n%s", err, out)
	}
	jm, rpcAddr, restURL := startJobManager(t, bin, t.TempDir())
	tms := map[string]*proc{}
	for _, id := range []string{"tm1", "tm2", "tm3"} {
		tms[id] = start(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", "1", "--id", id, "--memory", "256MiB")
	}
	waitTaskManagers(t, restURL, 3)
	cmd := exec.Command(bin, append(args, "--output", spread, "--jobmanager", restURL)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deployed := regexp.MustCompile(`attempt 1-1 deployed spread over TaskManagers (tm\d) \(1\), (tm\d) \(1\)`)
	var shares []string
	for deadline := time.Now().Add(20 * time.Second); shares == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job was not deployed spread in 20 s")
		}
		if m := deployed.FindStringSubmatch(jm.stderr.String()); m != nil {
			shares = m[1:]
		}
	}
	time.Sleep(800 * time.Millisecond) // into the supersteps: reading the points takes about 0.5 s
	tms[shares[1]].kill(t)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("spread: %v\n%s", err, out.String())
	}
	log := jm.stderr.String()
	if !strings.Contains(log, "attempt 1-1 failed") {
		t.Fatalf("the first attempt did not fail: the kill came too late?\n%s", log)
	}
	for l := range strings.Lines(log) {
		if strings.Contains(l, "attempt 1-1 failed") {
			t.Log(strings.TrimSpace(l))
		}
	}
	if !strings.Contains(log, "attempt 1-2 deployed spread over TaskManagers") {
		t.Fatalf("the second attempt did not run spread over the TaskManagers left\n%s", log)
	}
	compareNumbers(t, "kmeans", embedded, spread)
}

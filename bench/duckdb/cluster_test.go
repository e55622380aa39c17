package duckdb

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirdata/weir/tpch"
)

// TestClusterCLI runs every TPC-H query with `weir tpch --jobmanager` on a
// JobManager and two TaskManagers of WEIR_BENCH_THREADS slots each, started
// from the weir binary on loopback, and checks each answer, printed by the
// submitting command, against DuckDB's. It logs each query's wall time
// (submission to answer). It runs only when WEIR_CLUSTER is set.
func TestClusterCLI(t *testing.T) {
	if os.Getenv("WEIR_CLUSTER") == "" {
		t.Skip("WEIR_CLUSTER is not set")
	}
	dir := dataDir(t)
	bin := buildWeir(t)
	restURL, rpcAddr := startJobManager(t, bin)
	for _, id := range []string{"tm1", "tm2"} {
		startProc(t, bin, "taskmanager", "--jobmanager", rpcAddr, "--slots", strconv.Itoa(threads()), "--id", id)
	}
	db := openDuckDB(t, dir, threads())
	for _, n := range tpch.Numbers() {
		t.Run(fmt.Sprintf("q%02d", n), func(t *testing.T) {
			cmd := exec.Command(bin, "tpch", "--data", dir, "--query", strconv.Itoa(n), "--jobmanager", restURL)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("weir tpch --query %d --jobmanager: %v\n%s", n, err, stderr.String())
			}
			t.Logf("q%02d on the cluster: %.2f s wall", n, time.Since(start).Seconds())
			rows, err := csv.NewReader(&stdout).ReadAll()
			if err != nil || len(rows) == 0 {
				t.Fatalf("weir's output is not CSV with a header: %v", err)
			}
			compareRows(t, rows[1:], duckRows(t, db, querySQL(t, n)))
		})
	}
}

// startProc starts the weir binary with args until the test ends.
func startProc(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("weir %s:\n%s", args[0], stderr.String())
		}
	})
}

// startJobManager starts a JobManager on free loopback ports and returns
// its REST URL and RPC address, from the line it prints when it listens.
func startJobManager(t *testing.T, bin string) (restURL, rpcAddr string) {
	t.Helper()
	cmd := exec.Command(bin, "jobmanager", "--checkpoint-dir", t.TempDir(), "--rest-address", "127.0.0.1:0", "--rpc-address", "127.0.0.1:0")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		pw.Close()
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "weir: JobManager: rpc %s rest %s", &rpcAddr, &restURL); err == nil {
			go io.Copy(io.Discard, pr)
			return restURL, strings.TrimSuffix(rpcAddr, ",")
		}
	}
	t.Fatal("the JobManager ended before it listened")
	return "", ""
}

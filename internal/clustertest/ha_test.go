package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/rest"
)

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcd starts an etcd process (Debian's etcd-server) in a temporary
// directory and returns its client URL once it answers. Without an etcd
// binary the test is skipped, except in CI.
func startEtcd(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no etcd binary: .ci/run installs etcd-server")
		}
		t.Skip("no etcd binary (apt-get install etcd-server)")
	}
	client, peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	p := start(t, bin, "--name", "weir-test", "--data-dir", filepath.Join(t.TempDir(), "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "weir-test="+peer, "--log-level", "error")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(client, "http://"), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return client
		}
		select {
		case err := <-p.done:
			t.Fatalf("etcd exited: %v\n%s", err, p.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("etcd did not listen within 20 s:\n%s", p.stderr.String())
	return ""
}

// waitLog waits for a line of p's stderr containing s.
func waitLog(t *testing.T, p *proc, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(p.stderr.String(), s) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q in:\n%s", s, p.stderr.String())
}

// TestKillLeader: two JobManagers with --ha etcd on a real etcd and two
// TaskManagers that find the leader there; window-stats submitted to the
// leader, which is killed with SIGKILL once the job ran a while. The
// standby takes over (after the leader's 2 s lease), restarts the job from
// the checkpoint recorded in etcd, and the job ends FINISHED with its
// committed output and late output equal to an uninterrupted embedded
// run's.
func TestKillLeader(t *testing.T) { failover(t, false) }

// TestPauseLeader: as TestKillLeader, but the leader is stopped with
// SIGSTOP past its lease and the TaskManagers' timeout, and resumed once
// the standby leads: the old leader finds its leadership lost and exits
// with status 1, the job ends FINISHED on the new leader and the committed
// output is exact (the old leader recorded nothing after it woke: its
// writes are fenced).
func TestPauseLeader(t *testing.T) { failover(t, true) }

func failover(t *testing.T, pause bool) {
	bin := weir(t)
	endpoints := startEtcd(t)
	job := windowStatsArgs(t, 7000)
	oracleDir, oracleLate := filepath.Join(t.TempDir(), "oracle"), filepath.Join(t.TempDir(), "oracle-late")
	runToEnd(t, bin, append(slices.Clone(job), "--output", oracleDir, "--late-output", oracleLate)...)
	want, wantLate := committed(t, oracleDir), committed(t, oracleLate)

	haFlags := []string{"--ha", "etcd", "--ha-etcd-endpoints", endpoints, "--ha-cluster-id", "clustertest", "--ha-lease-ttl", "2s"}
	jmFlags := append(slices.Clone(haFlags), "--heartbeat-timeout", "2s")
	ck := t.TempDir()
	jm1, _, rest1 := startJobManager(t, bin, ck, jmFlags...)
	waitLog(t, jm1, "leading at epoch")
	jm2, _, rest2 := startJobManager(t, bin, ck, jmFlags...)
	for _, id := range []string{"tm1", "tm2"} {
		start(t, bin, append([]string{"taskmanager", "--slots", "2", "--id", id}, haFlags...)...)
	}
	out, late := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "late")
	stdout := runToEnd(t, bin, append(slices.Clone(job), "--output", out, "--late-output", late,
		"--checkpoint-interval", "200ms", "--rate", "1000", "--jobmanager", rest1, "--detached")...)
	jid := strings.TrimSpace(strings.TrimPrefix(stdout, "Job has been submitted with JobID "))
	c1, c2 := rest.NewClient(rest1, ""), rest.NewClient(rest2, "")
	busy(t, c1, time.Now().Add(20*time.Second))
	time.Sleep(1500 * time.Millisecond)
	if ck, err := c1.Checkpoints(context.Background(), jid); err != nil || ck.Counts.Completed == 0 {
		t.Fatalf("no checkpoint recorded before the kill: %+v, %v", ck, err)
	}
	if pause {
		if err := jm1.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Log("stopped the leader")
		waitLog(t, jm2, "leading at epoch")
		waitLog(t, jm2, "registered with 2 slots")
		if err := jm1.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		t.Log("resumed the old leader")
		select {
		case err := <-jm1.done:
			jm1.done <- err
			if err == nil || !strings.Contains(jm1.stderr.String(), "lost the leadership") {
				t.Fatalf("the old leader woke and exited with %v:\n%s", err, tail(jm1.stderr.String(), 10))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the old leader runs on after it woke:\n%s", tail(jm1.stderr.String(), 10))
		}
	} else {
		jm1.kill(t)
		t.Log("killed the leader")
		waitLog(t, jm2, "leading at epoch")
	}
	cks := exact(t, c2, jid, out, late, want, wantLate)
	if cks.Latest.Restored == nil {
		t.Fatal("the new leader restarted the job from the beginning, not from its checkpoint")
	}
}

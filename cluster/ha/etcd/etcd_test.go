package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/weirdata/weir/cluster/ha"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// etcdServer is a real etcd process the test starts, kills and restarts
// on the same data directory and ports.
type etcdServer struct {
	t          *testing.T
	bin, dir   string
	client     string // http://127.0.0.1:port
	peer       string
	cmd        *exec.Cmd
	done       chan struct{}
	exitStatus error
}

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

// startEtcd starts etcd (Debian's etcd-server) in a temporary directory.
// Without an etcd binary the test is skipped, except in CI, where .ci/run
// installs one.
func startEtcd(t *testing.T) *etcdServer {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no etcd binary: .ci/run installs etcd-server")
		}
		t.Skip("no etcd binary (apt-get install etcd-server)")
	}
	s := &etcdServer{t: t, bin: bin, dir: filepath.Join(t.TempDir(), "etcd"),
		client: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), peer: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
	s.start()
	t.Cleanup(s.kill)
	return s
}

func (s *etcdServer) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "--name", "weir-test", "--data-dir", s.dir,
		"--listen-client-urls", s.client, "--advertise-client-urls", s.client,
		"--listen-peer-urls", s.peer, "--initial-advertise-peer-urls", s.peer,
		"--initial-cluster", "weir-test="+s.peer, "--log-level", "error")
	var out strings.Builder
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.done = make(chan struct{})
	go func() { s.exitStatus = s.cmd.Wait(); close(s.done) }()
	// Wait until it answers.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.client}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		s.t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err := cli.Get(ctx, "health")
		cancel()
		if err == nil {
			return
		}
		select {
		case <-s.done:
			s.t.Fatalf("etcd exited: %v\n%s", s.exitStatus, out.String())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("etcd did not answer within 20 s: %v\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops etcd with SIGKILL and waits for it.
func (s *etcdServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

func open(t *testing.T, s *etcdServer, cluster string, ttl time.Duration) *Store {
	t.Helper()
	st, err := Open(context.Background(), Config{Endpoints: []string{s.client}, ClusterID: cluster, LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func isFenced(err error) bool { return errors.Is(err, ha.ErrFenced) }

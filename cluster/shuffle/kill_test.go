package shuffle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a peer process: "consumer" serves an
// inbox and reads it forever, "producer" sends to WEIR_SHUFFLE_ADDR
// forever. Each prints a line when it runs.
const helperEnv = "WEIR_SHUFFLE_HELPER"

var killID = ChannelID{Job: "kill", Attempt: 1, Edge: 0, Producer: 0, Consumer: 0}

func helperMain(mode string) int {
	ctx := context.Background()
	switch mode {
	case "consumer":
		n := startNode(helperTB{}, fast)
		in, err := n.srv.Inbox(killID.inbox(), 1, 4)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(n.addr)
		drain(ctx, helperTB{}, in, func(Frame) {})
		select {}
	case "producer":
		cl := NewClient(Options{Name: "producer-child", HeartbeatInterval: fast.HeartbeatInterval, HeartbeatTimeout: fast.HeartbeatTimeout})
		pr, err := cl.Open(ctx, os.Getenv("WEIR_SHUFFLE_ADDR"), killID)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("sending")
		for seq := 0; ; seq++ {
			if err := pr.Send(ctx, payload(0, seq)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	return 2
}

// helperTB is the testing.TB of a helper process: a failure ends it.
type helperTB struct{ testing.TB }

func (helperTB) Helper()           {}
func (helperTB) Cleanup(func())    {}
func (helperTB) Fatal(args ...any) { fmt.Fprintln(os.Stderr, args...); os.Exit(1) }

// startHelper runs the test binary as a peer process in mode and returns
// it with the first line it printed.
func startHelper(t *testing.T, mode string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper %s: %v", mode, err)
	}
	return cmd, strings.TrimSpace(line)
}

// TestConsumerKilled kills the consumer process with SIGKILL while a
// producer sends to it: the producer's Send fails with ErrBroken naming the
// consumer's address.
func TestConsumerKilled(t *testing.T) {
	ctx := testCtx(t)
	cmd, addr := startHelper(t, "consumer")
	cl := newClient(t, fast)
	pr, err := cl.Open(ctx, addr, killID)
	if err != nil {
		t.Fatal(err)
	}
	seq := 0
	for ; seq < 20; seq++ {
		if err := pr.Send(ctx, payload(0, seq)); err != nil {
			t.Fatalf("frame %d before the kill: %v", seq, err)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for ; ; seq++ {
		if err = pr.Send(ctx, payload(0, seq)); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Send after the kill: %v, want ErrBroken naming %s", err, addr)
	}
	t.Log(err)
}

// TestProducerKilled kills the producer process with SIGKILL while the
// consumer reads: Poll fails with ErrBroken naming the producer.
func TestProducerKilled(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, fast)
	in, err := n.srv.Inbox(killID.inbox(), 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd, _ := startHelper(t, "producer", "WEIR_SHUFFLE_ADDR="+n.addr)
	frames := 0
	err = drain(ctx, t, in, func(f Frame) {
		if frames++; frames == 20 {
			if err := cmd.Process.Kill(); err != nil {
				t.Error(err)
			}
		}
	})
	if frames < 20 || !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "producer-child") {
		t.Fatalf("Poll after %d frames: %v, want ErrBroken naming producer-child", frames, err)
	}
	t.Log(err)
}

// TestServerStopped stops the consumer's grpc.Server abruptly and resets
// the producer's stream: each side reports the other.
func TestServerStopped(t *testing.T) {
	ctx := testCtx(t)
	n := startNode(t, fast)
	in, err := n.srv.Inbox(killID.inbox(), 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cl := newClient(t, Options{Name: "producer-tm", HeartbeatInterval: fast.HeartbeatInterval, HeartbeatTimeout: fast.HeartbeatTimeout})
	pr, err := cl.Open(ctx, n.addr, killID)
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.Send(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	// the producer's stream reset: the consumer names the producer
	pr.c.cancel()
	err = drain(ctx, t, in, func(Frame) {})
	if !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "producer-tm") {
		t.Fatalf("Poll after the reset: %v, want ErrBroken naming producer-tm", err)
	}
	// once the producer's side saw its stream end, a new connection, then
	// the consumer's server stopped
	<-pr.c.done
	pr, err = cl.Open(ctx, n.addr, ChannelID{Job: "stop"})
	if err != nil {
		t.Fatal(err)
	}
	n.gs.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		err = pr.Send(ctx, []byte("x"))
	}
	if !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), n.addr) {
		t.Fatalf("Send after the stop: %v, want ErrBroken naming %s", err, n.addr)
	}
}

// TestConsumerStopped stops the consumer process with SIGSTOP: it neither
// dies nor answers, and the producer's heartbeats find it silent.
func TestConsumerStopped(t *testing.T) {
	ctx := testCtx(t)
	cmd, addr := startHelper(t, "consumer")
	cl := newClient(t, fast)
	pr, err := cl.Open(ctx, addr, killID)
	if err != nil {
		t.Fatal(err)
	}
	if err := pr.Send(ctx, payload(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for seq := 1; err == nil; seq++ {
		err = pr.Send(ctx, payload(0, seq))
	}
	if !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "no message for") {
		t.Fatalf("Send to a stopped consumer: %v, want ErrBroken naming %s and the silence", err, addr)
	}
	t.Log(err)
}

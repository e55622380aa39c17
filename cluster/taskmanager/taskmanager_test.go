package taskmanager

import (
	"context"
	"testing"

	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/internal/rpc"
)

// blocking runs every job until it is canceled.
type blocking struct{ started chan string }

func (blocking) Check([]string) (string, int, error) { return "blocking", 1, nil }

func (b blocking) Run(ctx context.Context, args []string, env cluster.Env) error {
	b.started <- env.Attempt
	<-ctx.Done()
	return ctx.Err()
}

// TestEpochs: a message of an epoch older than the largest seen is
// refused (nothing deploys); one of the current epoch deploys, and a later
// epoch's Cancel ends the attempt.
func TestEpochs(t *testing.T) {
	prog := blocking{started: make(chan string, 4)}
	tm := &TaskManager{opts: Options{Program: prog, Log: discard{}}, epoch: 5, deps: map[string]*deployment{}}
	ctx := context.Background()
	tm.handle(ctx, &rpc.ToTM{Epoch: 4, Deploy: &rpc.Deploy{JobID: "j", Attempt: "4-1", Slots: 1}})
	tm.mu.Lock()
	n := len(tm.deps)
	tm.mu.Unlock()
	if n != 0 {
		t.Fatal("a deployment of epoch 4 ran after epoch 5 was seen")
	}
	tm.handle(ctx, &rpc.ToTM{Epoch: 5, Deploy: &rpc.Deploy{JobID: "j", Attempt: "5-1", Slots: 1}})
	if a := <-prog.started; a != "5-1" {
		t.Fatalf("attempt %s started", a)
	}
	tm.handle(ctx, &rpc.ToTM{Epoch: 4, Cancel: &rpc.Cancel{JobID: "j", Attempt: "5-1"}})
	tm.mu.Lock()
	d := tm.deps["j"]
	tm.mu.Unlock()
	select {
	case <-d.done:
		t.Fatal("a cancel of epoch 4 ended the attempt")
	default:
	}
	tm.handle(ctx, &rpc.ToTM{Epoch: 6, Cancel: &rpc.Cancel{JobID: "j", Attempt: "5-1"}})
	<-d.done
	if tm.epoch != 6 {
		t.Fatalf("epoch %d after a message of epoch 6", tm.epoch)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

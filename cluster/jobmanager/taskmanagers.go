package jobmanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/cluster"
	"github.com/weirdata/weir/cluster/internal/rpc"
)

// taskManager is a TaskManager registered with the JobManager.
type taskManager struct {
	id, address string
	dataAddr    string // its shuffle server's, "" when it has none
	slots, free int
	cores       int
	memory      int64
	registered  time.Time
	last        time.Time // the last message heard
	send        chan *rpc.ToTM
	lost        chan struct{}
	lostOnce    sync.Once
	attempts    map[string]*attempt // by job id
}

// sendLocked queues msg for the TaskManager, stamped with the epoch; a
// TaskManager whose queue is full is too slow to count on and is lost.
func (jm *JobManager) sendLocked(tm *taskManager, msg *rpc.ToTM) {
	if jm.lead != nil {
		msg.Epoch = jm.lead.Epoch
	}
	select {
	case tm.send <- msg:
	default:
		jm.loseLocked(tm, "its message queue is full")
	}
}

// Connect serves a TaskManager's stream: its registration, then its
// heartbeats and statuses until the stream breaks or it is declared lost.
func (jm *JobManager) Connect(stream grpc.ServerStream) error {
	var first rpc.FromTM
	if err := stream.RecvMsg(&first); err != nil {
		return err
	}
	reg := first.Register
	if reg == nil {
		return errors.New("jobmanager: a TaskManager's stream must begin with its registration")
	}
	if p, ok := peer.FromContext(stream.Context()); ok && reg.Address == "" && p.Addr != nil {
		reg.Address = p.Addr.String() // where its connection comes from
	}
	if err := cluster.CheckFingerprint(jm.fp, reg.Fingerprint); err != nil {
		jm.logf("refused TaskManager %s at %s: %v", reg.ID, reg.Address, err)
		stream.SendMsg(&rpc.ToTM{Refused: err.Error()})
		return err
	}
	if reg.Slots <= 0 {
		err := fmt.Errorf("jobmanager: TaskManager %s offers %d slots, want 1 or more", reg.ID, reg.Slots)
		stream.SendMsg(&rpc.ToTM{Refused: err.Error()})
		return err
	}
	now := jm.opts.Clock.Now()
	tm := &taskManager{id: reg.ID, address: reg.Address, dataAddr: reg.DataAddress, slots: reg.Slots, free: reg.Slots, cores: reg.CPUCores, memory: reg.Memory,
		registered: now, last: now,
		send: make(chan *rpc.ToTM, 256), lost: make(chan struct{}), attempts: map[string]*attempt{}}
	jm.mu.Lock()
	epoch, err := jm.epochLocked()
	if err != nil {
		jm.mu.Unlock()
		stream.SendMsg(&rpc.ToTM{Refused: "jobmanager: not the leader"})
		return err
	}
	if old := jm.tms[tm.id]; old != nil {
		jm.loseLocked(old, "it registered again")
	}
	jm.tms[tm.id] = tm
	jm.notifyLocked()
	jm.mu.Unlock()
	jm.logf("TaskManager %s at %s registered with %d slots", tm.id, tm.address, tm.slots)
	if err := stream.SendMsg(&rpc.ToTM{Epoch: epoch, Accepted: &rpc.Accepted{TimeoutMillis: jm.opts.HeartbeatTimeout.Milliseconds()}}); err != nil {
		jm.lose(tm, fmt.Sprintf("its stream broke: %v", err))
		return err
	}
	sendErr := make(chan error, 1)
	go func() {
		for {
			select {
			case msg := <-tm.send:
				if err := stream.SendMsg(msg); err != nil {
					sendErr <- err
					return
				}
			case <-tm.lost:
				sendErr <- nil
				return
			}
		}
	}()
	recvErr := make(chan error, 1)
	go func() {
		for {
			var m rpc.FromTM
			if err := stream.RecvMsg(&m); err != nil {
				recvErr <- err
				return
			}
			jm.heard(tm, &m)
		}
	}()
	select {
	case err = <-recvErr:
		jm.lose(tm, fmt.Sprintf("its stream broke: %v", err))
		<-sendErr
	case err = <-sendErr:
		if err != nil {
			jm.lose(tm, fmt.Sprintf("its stream broke: %v", err))
		}
	case <-tm.lost:
		<-sendErr
	}
	return err
}

// heard handles a TaskManager's message.
func (jm *JobManager) heard(tm *taskManager, m *rpc.FromTM) {
	jm.mu.Lock()
	tm.last = jm.opts.Clock.Now()
	jm.mu.Unlock()
	switch {
	case m.Status != nil:
		jm.status(tm, m.Status)
	case m.SavepointDone != nil:
		jm.savepointDone(m.SavepointDone)
	case m.Report != nil:
		jm.report(tm, m.Report)
	}
}

// lose declares tm lost: its attempts fail and its slots are gone.
func (jm *JobManager) lose(tm *taskManager, why string) {
	jm.mu.Lock()
	jm.loseLocked(tm, why)
	jm.mu.Unlock()
}

func (jm *JobManager) loseLocked(tm *taskManager, why string) {
	lost := false
	tm.lostOnce.Do(func() {
		close(tm.lost)
		lost = true
	})
	if !lost {
		return
	}
	if jm.tms[tm.id] == tm {
		delete(jm.tms, tm.id)
	}
	jm.logf("TaskManager %s lost: %s", tm.id, why)
	for jid, a := range tm.attempts {
		if j := jm.jobs[jid]; j != nil {
			if _, s := a.shareOn(tm); s != nil {
				s.ended = true
			}
			jm.cancelSharesLocked(j, a) // the other shares of a spread attempt
			j.endAttemptLocked(a, outcome{state: rpc.Failed, err: fmt.Sprintf("TaskManager %s lost: %s", tm.id, why)})
		}
	}
	tm.attempts = map[string]*attempt{}
	jm.notifyLocked()
}

// watchHeartbeats sends the JobManager's heartbeat to each TaskManager
// every interval and declares lost those silent past the timeout.
func (jm *JobManager) watchHeartbeats(ctx context.Context) {
	for clock.Sleep(ctx, jm.opts.Clock, jm.opts.HeartbeatInterval) == nil {
		jm.checkHeartbeats()
	}
}

// checkHeartbeats is one round of watchHeartbeats at the clock's now.
func (jm *JobManager) checkHeartbeats() {
	now := jm.opts.Clock.Now()
	jm.mu.Lock()
	defer jm.mu.Unlock()
	for _, tm := range jm.sortedTMsLocked() {
		if silent := now.Sub(tm.last); silent > jm.opts.HeartbeatTimeout {
			jm.loseLocked(tm, fmt.Sprintf("no heartbeat for %v (timeout %v)", silent.Round(time.Millisecond), jm.opts.HeartbeatTimeout))
			continue
		}
		jm.sendLocked(tm, &rpc.ToTM{Heartbeat: true})
	}
}

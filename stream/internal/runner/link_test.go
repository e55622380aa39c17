package runner

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/dataplane"
	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
	"github.com/weirdata/weir/flow"
)

// linkPair opens the links of parts 0 and 1 over two shuffle peers; got
// collects what each part's handle receives, broken each part's failure.
type linkPair struct {
	peers  []*shuffletest.Peer
	links  []*link
	mu     sync.Mutex
	got    [2][]*msg
	broken [2]error
}

func openLinkPair(t *testing.T, name string) *linkPair {
	lp := &linkPair{peers: []*shuffletest.Peer{
		shuffletest.Start(t, shuffle.Options{Name: "p0", HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 500 * time.Millisecond}),
		shuffletest.Start(t, shuffle.Options{Name: "p1", HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 500 * time.Millisecond}),
	}}
	for k := range 2 {
		s := &Spread{Part: k, Slots: []int{1, 1}}
		tr := &dataplane.Transport{Job: name, Client: lp.peers[k].Client, Server: lp.peers[k].Server,
			Addr: func(v, i int) string { return lp.peers[s.part(v, i)].Addr }}
		l, err := openLink(context.Background(), s, tr, func(from int, m *msg) error {
			lp.mu.Lock()
			lp.got[k] = append(lp.got[k], m)
			lp.mu.Unlock()
			return nil
		}, func(err error) {
			lp.mu.Lock()
			if lp.broken[k] == nil {
				lp.broken[k] = err
			}
			lp.mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		lp.links = append(lp.links, l)
	}
	return lp
}

// closeBoth closes the two links at once: each waits for the other's end
// of its inbox.
func (lp *linkPair) closeBoth() {
	var wg sync.WaitGroup
	for _, l := range lp.links {
		wg.Go(l.close)
	}
	wg.Wait()
}

func (lp *linkPair) wait(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lp.mu.Lock()
		ok := cond()
		lp.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// Messages cross in order both ways, one of several frames among small
// ones (a large Ack); a part that ends its link ends its peer's inbox.
func TestLinkOrder(t *testing.T) {
	lp := openLinkPair(t, "order")
	big := bytes.Repeat([]byte("0123456789"), 3*fragment/10+7) // four frames
	const n = 500
	for i := range n {
		inner := []byte(fmt.Sprint(i))
		if i == n/2 {
			inner = big
		}
		lp.links[1].send(0, &msg{Kind: wireCoord, Inner: inner})
		lp.links[0].send(1, &msg{Kind: wireSplitGrant, Seq: uint64(i)})
	}
	lp.wait(t, func() bool { return len(lp.got[0]) == n && len(lp.got[1]) == n })
	for i := range n {
		want := []byte(fmt.Sprint(i))
		if i == n/2 {
			want = big
		}
		if m := lp.got[0][i]; m.Kind != wireCoord || !bytes.Equal(m.Inner, want) {
			t.Fatalf("part 0's message %d: kind %d, %d bytes", i, m.Kind, len(m.Inner))
		}
		if m := lp.got[1][i]; m.Kind != wireSplitGrant || m.Seq != uint64(i) {
			t.Fatalf("part 1's message %d: kind %d seq %d", i, m.Kind, m.Seq)
		}
	}
	lp.closeBoth()
	if lp.broken[0] != nil || lp.broken[1] != nil {
		t.Fatalf("broken: %v, %v", lp.broken[0], lp.broken[1])
	}
}

// A peer that dies breaks the link, with an error naming the channel.
func TestLinkBroken(t *testing.T) {
	lp := openLinkPair(t, "broken")
	lp.links[1].send(0, &msg{Kind: wireRegister})
	lp.wait(t, func() bool { return len(lp.got[0]) == 1 })
	lp.peers[1].Stop()
	lp.wait(t, func() bool { return lp.broken[0] != nil })
	if !strings.Contains(lp.broken[0].Error(), "control channel") {
		t.Fatalf("broken: %v", lp.broken[0])
	}
	lp.closeBoth()
}

var _ flow.Transport = (*dataplane.Transport)(nil)

package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/cluster/shuffle"
	"github.com/weirdata/weir/cluster/shuffle/shuffletest"
	"github.com/weirdata/weir/flow"
)

// linkPair opens the links of parts 0 and 1 over two shuffle peers; got
// collects what each part's handle receives, broken each part's failure.
type linkPair struct {
	peers  []*shuffletest.Peer
	links  []*flow.Link
	mu     sync.Mutex
	got    [2][][]byte
	ended  [2][]int
	broken [2]error
}

func openLinkPair(t *testing.T, name string) *linkPair {
	lp := &linkPair{peers: []*shuffletest.Peer{
		shuffletest.Start(t, shuffle.Options{Name: "p0", HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 500 * time.Millisecond}),
		shuffletest.Start(t, shuffle.Options{Name: "p1", HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 500 * time.Millisecond}),
	}}
	for k := range 2 {
		tr := &Transport{Job: name, Client: lp.peers[k].Client, Server: lp.peers[k].Server,
			Addr: func(v, i int) string { return lp.peers[i].Addr }} // flow.LinkVertex: subtask i in part i
		l, err := flow.OpenLink(context.Background(), k, 2, tr, flow.LinkHandlers{
			Message: func(from int, b []byte) error {
				lp.mu.Lock()
				lp.got[k] = append(lp.got[k], b)
				lp.mu.Unlock()
				return nil
			},
			Ended: func(from int) {
				lp.mu.Lock()
				lp.ended[k] = append(lp.ended[k], from)
				lp.mu.Unlock()
			},
			Broken: func(err error) {
				lp.mu.Lock()
				if lp.broken[k] == nil {
					lp.broken[k] = err
				}
				lp.mu.Unlock()
			},
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
		wg.Go(l.Close)
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

// Messages cross in order both ways, one of several frames and an empty
// one among small ones; a part that ends its link ends its peer's inbox.
func TestLinkOrder(t *testing.T) {
	lp := openLinkPair(t, "order")
	big := bytes.Repeat([]byte("0123456789"), 3*flow.LinkFragment/10+7) // four frames
	const n = 500
	msg := func(i int) []byte {
		switch i {
		case n / 2:
			return big
		case n / 3:
			return nil
		}
		return []byte(fmt.Sprint(i))
	}
	for i := range n {
		lp.links[1].Send(0, msg(i))
		lp.links[0].Send(1, []byte(fmt.Sprint("down", i)))
	}
	lp.wait(t, func() bool { return len(lp.got[0]) == n && len(lp.got[1]) == n })
	for i := range n {
		if m := lp.got[0][i]; !bytes.Equal(m, msg(i)) {
			t.Fatalf("part 0's message %d: %d bytes, want %d", i, len(m), len(msg(i)))
		}
		if m := lp.got[1][i]; string(m) != fmt.Sprint("down", i) {
			t.Fatalf("part 1's message %d: %q", i, m)
		}
	}
	lp.closeBoth()
	for k := range 2 {
		select {
		case <-lp.links[k].Ended():
		default:
			t.Fatalf("part %d's link did not end", k)
		}
		if want := []int{1 - k}; !slices.Equal(lp.ended[k], want) {
			t.Fatalf("part %d saw the channels of %v end, want %v", k, lp.ended[k], want)
		}
	}
	if lp.broken[0] != nil || lp.broken[1] != nil {
		t.Fatalf("broken: %v, %v", lp.broken[0], lp.broken[1])
	}
}

// A peer that dies breaks the link, with an error naming the channel.
func TestLinkBroken(t *testing.T) {
	lp := openLinkPair(t, "broken")
	lp.links[1].Send(0, []byte("hello"))
	lp.wait(t, func() bool { return len(lp.got[0]) == 1 })
	lp.peers[1].Stop()
	lp.wait(t, func() bool { return lp.broken[0] != nil })
	if !strings.Contains(lp.broken[0].Error(), "control channel") {
		t.Fatalf("broken: %v", lp.broken[0])
	}
	lp.closeBoth()
}

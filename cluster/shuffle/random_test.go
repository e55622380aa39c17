package shuffle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestRandomized runs producers that mix data, events and priority frames
// against a consumer that polls, blocks and unblocks channels and takes
// priority frames at random, over several seeds and capacities. The oracle
// is what each producer sent: its data and events arrive in order, end of
// partition last; its priority frames arrive in order, each after the
// frames of its channel the consumer had taken when it arrived and before
// every frame sent after it, and Overtook counts exactly the frames it
// went ahead of.
func TestRandomized(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			ctx := testCtx(t)
			r := rand.New(rand.NewPCG(seed, 99))
			const producers, frames = 3, 150
			capacity := 1 + r.IntN(4)
			n := startNode(t, Options{})
			cl := newClient(t, Options{})
			id := InboxID{Job: "random", Attempt: uint32(seed)}
			in, err := n.srv.Inbox(id, producers, capacity)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()

			type sentLog struct {
				inBand   []string // data and events, then end of partition
				priority []string
			}
			sent := make([]sentLog, producers)
			errs := make(chan error, producers)
			var wg sync.WaitGroup
			for p := range producers {
				pr, err := cl.Open(ctx, n.addr, ChannelID{Job: id.Job, Attempt: id.Attempt, Producer: uint32(p)})
				if err != nil {
					t.Fatal(err)
				}
				pseed := r.Uint64()
				wg.Add(1)
				go func() {
					defer wg.Done()
					pr2 := rand.New(rand.NewPCG(pseed, 1))
					log := &sent[p]
					for seq := range frames {
						b := payload(p, seq)
						var err error
						switch x := pr2.IntN(10); {
						case x == 0:
							// a priority frame names how many in-band frames went before it
							b = binary.LittleEndian.AppendUint64(b[:8], uint64(len(log.inBand)))
							log.priority = append(log.priority, sentString(Priority, 5, b))
							err = pr.SendPriority(5, b)
						case x == 1:
							log.inBand = append(log.inBand, sentString(Event, 2, b[:20]))
							err = pr.SendEvent(ctx, 2, b[:20])
						default:
							log.inBand = append(log.inBand, sentString(Data, 0, b))
							err = pr.Send(ctx, b)
						}
						if err != nil {
							errs <- err
							return
						}
					}
					log.inBand = append(log.inBand, sentString(Event, EndOfPartition, nil))
					if err := pr.Close(ctx); err != nil {
						errs <- err
					}
				}()
			}

			gotInBand := make([][]string, producers)
			gotPriority := make([][]string, producers)
			check := func(f Frame) {
				p := f.Producer
				if f.Type != Priority {
					gotInBand[p] = append(gotInBand[p], frameString(f))
					return
				}
				gotPriority[p] = append(gotPriority[p], frameString(f))
				before := int(binary.LittleEndian.Uint64(f.Bytes[8:]))
				seen := len(gotInBand[p])
				if seen > before || f.Overtook != before-seen {
					t.Errorf("channel %d: priority frame sent after %d in-band frames came after %d of them, Overtook %d", p, before, seen, f.Overtook)
				}
			}
			blocked := make([]bool, producers)
		loop:
			for {
				switch x := r.IntN(20); {
				case x == 0:
					p := r.IntN(producers)
					in.Block(p)
					blocked[p] = true
				case x < 4:
					p := r.IntN(producers)
					in.Unblock(p)
					blocked[p] = false
				case x == 4:
					if f, ok := in.PollPriority(); ok {
						check(f)
						f.Release()
					}
				default:
					f, ok, err := in.Poll()
					if err != nil {
						if errors.Is(err, io.EOF) {
							break loop
						}
						t.Fatal(err)
					}
					if ok {
						check(f)
						f.Release()
						continue
					}
					if slices.Contains(blocked, true) {
						continue // unblock before waiting
					}
					select {
					case <-in.Ready():
					case <-ctx.Done():
						t.Fatal(ctx.Err())
					}
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for p := range producers {
				if !slices.Equal(gotInBand[p], sent[p].inBand) {
					t.Fatalf("channel %d (capacity %d): in-band frames differ at %d of %d", p, capacity, firstDiff(gotInBand[p], sent[p].inBand), len(sent[p].inBand))
				}
				if !slices.Equal(gotPriority[p], sent[p].priority) {
					t.Fatalf("channel %d: got %d priority frames, want %d in order", p, len(gotPriority[p]), len(sent[p].priority))
				}
			}
		})
	}
}

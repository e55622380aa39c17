package shuffle

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkThroughput sends 32 KiB frames over loopback from producer
// subtasks to one consumer subtask's inbox (8 frames of credit per
// channel), both processes' sides in this one: an op is one frame sent,
// received, polled and released. The channels share one stream, as the
// package runs them, or (streams=8) each has a connection of its own.
func BenchmarkThroughput(b *testing.B) {
	for _, tc := range []struct{ channels, streams int }{{1, 1}, {8, 1}, {8, 8}} {
		channels := tc.channels
		b.Run(fmt.Sprintf("channels=%d/streams=%d", channels, tc.streams), func(b *testing.B) {
			ctx := context.Background()
			n := startNode(b, Options{})
			clients := make([]*Client, tc.streams)
			for i := range clients {
				clients[i] = newClient(b, Options{})
			}
			const capacity, size = 8, 32 << 10
			in, err := n.srv.Inbox(InboxID{Job: "bench"}, channels, capacity)
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			prods := make([]*Producer, channels)
			for p := range prods {
				if prods[p], err = clients[p%len(clients)].Open(ctx, n.addr, ChannelID{Job: "bench", Producer: uint32(p)}); err != nil {
					b.Fatal(err)
				}
			}
			frame := make([]byte, size)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for p, pr := range prods {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := p; i < b.N; i += channels {
						if err := pr.Send(ctx, frame); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			for got := 0; got < b.N; {
				f, ok, err := in.Poll()
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					<-in.Ready()
					continue
				}
				if len(f.Bytes) != size {
					b.Fatalf("frame of %d bytes", len(f.Bytes))
				}
				f.Release()
				got++
			}
			wg.Wait()
		})
	}
}

package typed

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// TestSpoolKeepsOrder: a spool replays its records in the order they were
// added, records larger than a segment included, whether it holds them in
// memory or spilled some of them, and reset empties it; it counts the bytes
// it spilled.
func TestSpoolKeepsOrder(t *testing.T) {
	var recs []string
	for i := range 300 {
		size := 1 + i%50
		if i%37 == 5 {
			size = 9000 // more than a 4 KiB segment
		}
		recs = append(recs, fmt.Sprintf("%03d", i)+strings.Repeat("x", size))
	}
	for _, budget := range []int64{0, 16 << 10} {
		t.Run(fmt.Sprintf("budget%d", budget), func(t *testing.T) {
			mgr, err := memory.NewManager(memory.Options{SegmentSize: 4096, Budget: budget})
			if err != nil {
				t.Fatal(err)
			}
			defer mgr.Close()
			disk, err := spill.NewDiskFS(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer disk.Close()
			codec, err := memory.NewCodec[string]()
			if err != nil {
				t.Fatal(err)
			}
			s := NewSpool(resource.Env{Memory: mgr, FS: disk}, "test spool", codec)
			defer s.Release()
			var before, maxBytes int64
			for _, r := range recs {
				maxBytes += int64(len(r)) + 10 // the record, and its encoded length
			}
			for round := range 2 {
				for i := 0; i < len(recs); i += 7 {
					if err := s.Add(recs[i:min(i+7, len(recs))]); err != nil {
						t.Fatal(err)
					}
				}
				var got []string
				if err := s.Replay(context.Background(), 16, func(b []string) error {
					got = append(got, b...)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, recs) {
					t.Fatalf("round %d: replayed %d records out of order (or changed), want %d", round, len(got), len(recs))
				}
				if spilled := len(s.files) > 0; spilled != (budget > 0) {
					t.Fatalf("round %d: spilled %v under budget %d", round, spilled, budget)
				}
				// SpilledBytes counts what went to files: some records, at
				// most all of them, and nothing without a budget
				if d := s.SpilledBytes() - before; (d > 0) != (budget > 0) || d > maxBytes {
					t.Fatalf("round %d: %d bytes spilled under budget %d, at most %d", round, d, budget, maxBytes)
				}
				before = s.SpilledBytes()
				s.Reset()
				if s.Len() != 0 {
					t.Fatalf("reset left %d records", s.Len())
				}
			}
		})
	}
}

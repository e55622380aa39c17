package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirdata/weir/internal/golden"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/watermark"
)

// TestRenderStreamProgress renders the status block of a fixed snapshot:
// testdata/stream_progress.txt holds it exactly as the terminal shows it.
func TestRenderStreamProgress(t *testing.T) {
	at := time.UnixMilli(1_700_000_060_000)
	s := stream.Overview{At: at, Window: 5 * time.Second, Vertices: []stream.VertexOverview{
		{Name: "Events Generator Source", Parallelism: 1, Watermark: 1_700_000_058_500, WatermarkLag: 1500 * time.Millisecond,
			Busy: 0.25, Idle: 0, Backpressured: 0.75,
			Operators: []stream.OperatorOverview{{Name: "Events Generator Source", RecordsOut: 60000, RecordsOutPerSecond: 12345.6}}},
		{Name: "KeyedProcess", Parallelism: 4, Watermark: watermark.Min, Busy: 0.104, Idle: 0.896,
			Operators: []stream.OperatorOverview{
				{Name: "KeyedProcess", RecordsIn: 60000, RecordsOut: 300, RecordsInPerSecond: 12345.6, RecordsOutPerSecond: 61.7},
				{Name: "Print", RecordsIn: 300, RecordsInPerSecond: 61.7},
			}},
		{Name: "a source with a name longer than the column", Parallelism: 2, Watermark: watermark.Max, Idle: 1,
			Operators: []stream.OperatorOverview{{Name: "a source with a name longer than the column", RecordsOutPerSecond: 2.5e6}}},
	}}
	got := renderStreamProgress("run state-machine", 3250*time.Millisecond, s, nil)
	ck := &stream.CheckpointHistory{Completed: []stream.CheckpointStats{
		{ID: 6, Duration: 41 * time.Millisecond, Size: 3 << 20, FullSize: 3 << 20},
		{ID: 7, Duration: 35200 * time.Microsecond, Size: 1536 << 10, FullSize: 40 << 20, Alignment: 2 * time.Millisecond, InFlight: 2048},
	}, Restores: []time.Duration{1234 * time.Millisecond}, Restarts: 1}
	got += "\n" + renderStreamProgress("run state-machine", 3250*time.Millisecond, s, ck)
	got += "\n" + renderStreamProgress("run state-machine", time.Second, stream.Overview{}, &stream.CheckpointHistory{})
	golden.Check(t, filepath.Join("testdata", "stream_progress.txt"), got)
}

// TestStreamProgressRedraw: each redraw moves the cursor up over the block
// drawn before and clears to the end of the screen; stop clears the last
// block.
func TestStreamProgressRedraw(t *testing.T) {
	var buf bytes.Buffer
	p := &streamProgress{w: &buf, quit: make(chan struct{})}
	p.draw("a\nb\n")
	p.draw("c\n")
	p.stop()
	if want := "a\nb\n\033[2A\r\033[Jc\n\033[1A\r\033[J"; buf.String() != want {
		t.Errorf("drew %q, want %q", buf.String(), want)
	}
}

// TestStreamProgressNotTerminal: without a terminal on stderr a stream job
// draws nothing there, with and without --progress=false.
func TestStreamProgressNotTerminal(t *testing.T) {
	for _, flag := range []string{"--progress=true", "--progress=false"} {
		code, stdout, stderr := runWeir(context.Background(), "run", "state-machine", "--events", "2000", "--error-rate", "0.1", flag)
		if code != 0 || stderr != "" || stdout == "" {
			t.Errorf("%s: exit %d, %d bytes of alerts, stderr %q", flag, code, len(stdout), stderr)
		}
	}
}

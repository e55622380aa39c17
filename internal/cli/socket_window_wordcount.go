package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weirdata/weir/examples/streaming"
)

func socketWindowWordCountJob() *streamJob {
	return &streamJob{
		name:  "socket-window-wordcount",
		args:  "--host H --port P [--window 5s] [--output DIR]",
		short: "Count the words a TCP server sends in 5 s windows (Flink's SocketWindowWordCount)",
		long: `Run Flink's SocketWindowWordCount: connect to the TCP server at --host and --port
(for instance "nc -lk 9999"), split every line it sends at each whitespace
character (Java's split("\\s")), key by word and count in tumbling processing-time
windows of --window (Flink's: 5 s). Each window prints "word : count" lines as it
ends ("N> " before each at a parallelism above 1). The job runs until the server
closes the connection or Ctrl-C (exit status 130); a server that cannot be reached
stops it at the start with an error naming host:port. --output DIR writes the
lines to part files (part-<subtask>-<n>) instead, committed as checkpoints
complete.`,
		bind: func(f *pflag.FlagSet) streamProgram {
			var p streaming.SocketWordCountParams
			f.StringVar(&p.Host, "host", "localhost", "host of the TCP server")
			f.IntVar(&p.Port, "port", 0, "port of the TCP server (required)")
			f.DurationVar(&p.Window, "window", 5*time.Second, "processing-time tumbling window size")
			f.StringVar(&p.Output, "output", "", "directory to write part files to (default: stdout)")
			return func(ctx context.Context, o streaming.Options) error {
				if p.Port <= 0 || p.Port >= 1<<16 {
					return &usageError{err: fmt.Errorf("--port must be in 1..65535, got %d", p.Port)}
				}
				if p.Window < time.Millisecond {
					return &usageError{err: fmt.Errorf("--window must be at least 1ms, got %v", p.Window)}
				}
				return streaming.RunSocketWindowWordCount(ctx, o, p)
			}
		},
	}
}

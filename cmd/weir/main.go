// Command weir is the command line of the weir dataflow engine; see internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/weirdata/weir/internal/cli"
)

func main() {
	os.Exit(run())
}

// run executes the command line with a context cancelled on Ctrl-C or SIGTERM, so
// that jobs clean up (deferred) before main exits.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/cluster/spread"
	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/examples/linesort"
)

// progressEvery is how often a progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// startSortProgress redraws a progress line of job on w (if not nil) until the
// returned stop function is called; stop waits for the goroutine and ends the
// line.
func startSortProgress(w io.Writer, job *linesort.Job) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				drawSortProgress(w, job.Progress())
				fmt.Fprintln(w)
				return
			case <-t.C:
				drawSortProgress(w, job.Progress())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

func drawSortProgress(w io.Writer, p linesort.Progress) {
	if !p.Merging {
		fmt.Fprintf(w, "\rweir sort: reading %s of %s%s\033[K", humanBytes(p.Read), humanBytes(p.Size), percent(p.Read, p.Size))
	} else {
		fmt.Fprintf(w, "\rweir sort: merging, wrote %s of %s%s\033[K", humanBytes(p.Written), humanBytes(p.Read), percent(p.Written, p.Read))
	}
}

func percent(n, total int64) string {
	if total <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%d%%)", n*100/total)
}

// datasetOptions returns the dataset options of a job command's flags. When
// stderr is a terminal, the job draws a progress line there (elapsed time,
// tasks finished, records moved between tasks) unless --progress=false; the
// returned done function ends that line and must be called when the job
// returns.
func (g *globalOptions) datasetOptions(cmd *cobra.Command, job string) (opts dataset.Options, done func()) {
	opts = dataset.Options{Parallelism: g.workers(), Memory: g.managed(), TmpDir: g.tmp, Adaptive: g.adaptive}
	if env := clusterEnv(cmd.Context()); env != nil {
		opts.Spread = spread.Dataset(env.Spread)
	}
	w := cmd.ErrOrStderr()
	if !g.progress || !isTerminal(w) {
		return opts, func() {}
	}
	var mu sync.Mutex
	drawn := false
	opts.ProgressEvery = progressEvery
	opts.Progress = func(p dataset.Progress) {
		tasks, finished := len(p.Vertices), 0
		var moved int64
		for _, v := range p.Vertices {
			if v.Done == v.Subtasks {
				finished++
			}
			moved += v.RecordsIn
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "\rweir %s: %.1fs, %d of %d tasks finished, %d records moved\033[K",
			job, p.Elapsed.Seconds(), finished, tasks, moved)
		drawn = true
	}
	return opts, func() {
		mu.Lock()
		defer mu.Unlock()
		if drawn {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}

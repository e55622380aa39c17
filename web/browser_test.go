package web

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var screenshot = flag.String("screenshot", "", "write the screenshot of the job page to this file")

// chromium runs headless Chromium on url with args and returns its
// standard output up to the page's script (whose text holds the markup it
// writes).
func chromium(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=3000", "--window-size=1400,1100"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, url)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	dom, _, _ := strings.Cut(string(out), "<script")
	return dom
}

var (
	vertexRow  = regexp.MustCompile(`<td class="vertex-name">([^<]*)</td>.*?<td class="num records-in">([\d,]+)</td><td class="num records-out">([\d,]+)</td>`)
	completed  = regexp.MustCompile(`id="checkpoints-completed">([\d,]+)<`)
	jobNameTag = regexp.MustCompile(`<h2 id="job-name">([^<]*) <span class="state (\w+)">`)
)

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBrowser loads the job page of a running job in headless Chromium
// (Debian's chromium), with the token in the URL: the rendered page names
// the job RUNNING and lists each of the job's vertices with its record
// counts (records out of the source and records in of the keyed vertex
// above zero), and a second load shows more completed checkpoints than
// the first. It keeps a screenshot of the page.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs headless Chromium")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	srv, j := running(t)
	for deadline := time.Now().Add(10 * time.Second); len(j.Checkpoints().Completed) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint in 10s")
		}
	}
	url := srv.URL + "/?token=" + token + "#/jobs/" + j.ID()
	dom := chromium(t, bin, url, "--dump-dom")
	if m := jobNameTag.FindStringSubmatch(dom); m == nil || m[1] != "web test" || m[2] != "RUNNING" {
		t.Fatalf("the page does not name the running job: %v\n%s", m, dom)
	}
	rows := vertexRow.FindAllStringSubmatch(dom, -1)
	ov := j.Overview()
	if len(rows) != len(ov.Vertices) {
		t.Fatalf("%d vertex rows for %d vertices\n%s", len(rows), len(ov.Vertices), dom)
	}
	for i, r := range rows {
		if r[1] != ov.Vertices[i].Name {
			t.Errorf("row %d names %q, want %q", i, r[1], ov.Vertices[i].Name)
		}
		in, out := atoi(t, r[2]), atoi(t, r[3])
		t.Logf("vertex %s: records in %d, out %d", r[1], in, out)
		if (i == 0 && out == 0) || (i > 0 && in == 0) {
			t.Errorf("vertex %s shows no records: in %d, out %d", r[1], in, out)
		}
	}
	if !strings.Contains(dom, `<svg id="graph"`) || strings.Count(dom, `<g class="vertex"`) != len(ov.Vertices) {
		t.Errorf("the graph does not draw the %d vertices\n%s", len(ov.Vertices), dom)
	}
	m := completed.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no checkpoint count in\n%s", dom)
	}
	first := atoi(t, m[1])
	shot := *screenshot
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "job.png")
	} else if shot, err = filepath.Abs(shot); err != nil {
		t.Fatal(err)
	}
	chromium(t, bin, url, "--screenshot="+shot)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Errorf("no screenshot: %v", err)
	}
	dom = chromium(t, bin, url, "--dump-dom")
	m = completed.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no checkpoint count in the second load\n%s", dom)
	}
	if second := atoi(t, m[1]); second <= first {
		t.Errorf("completed checkpoints %d then %d: no growth", first, second)
	} else {
		t.Logf("completed checkpoints %d then %d", first, second)
	}
}

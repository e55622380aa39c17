// Package webtest is what the web UI's tests share: authorized requests,
// sums over Prometheus' text format, and headless Chromium (Debian's
// chromium) loading the page, with what the rendered page shows.
package webtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Chromium returns the chromium binary's path; it skips t when chromium
// is not installed.
func Chromium(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	return bin
}

// Load runs headless Chromium bin on url with args and returns its
// standard output up to the page's script (whose text holds the markup it
// writes). With --dump-dom that is the rendered page.
func Load(t testing.TB, bin, url string, args ...string) string {
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

// What a job's page shows.
var (
	// VertexRow matches a vertex's row: its name, records in and out.
	VertexRow = regexp.MustCompile(`<td class="vertex-name">([^<]*)</td>.*?<td class="num records-in">([\d,]+)</td><td class="num records-out">([\d,]+)</td>`)
	// Completed matches the count of completed checkpoints.
	Completed = regexp.MustCompile(`id="checkpoints-completed">([\d,]+)<`)
	// JobName matches the job's name and state.
	JobName = regexp.MustCompile(`<h2 id="job-name">([^<]*) <span class="state (\w+)">`)
)

// Atoi reads a count the page shows (with thousands separators).
func Atoi(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ScreenshotDirEnv names the directory screenshots are kept in; without
// it they go to the test's temporary directory.
const ScreenshotDirEnv = "WEIR_SCREENSHOT_DIR"

// Screenshot takes a screenshot of url into name (a PNG) under
// $WEIR_SCREENSHOT_DIR, else under t's temporary directory, and returns
// its path; it fails t when Chromium wrote nothing.
func Screenshot(t testing.TB, bin, url, name string) string {
	t.Helper()
	dir := os.Getenv(ScreenshotDirEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	Load(t, bin, url, "--screenshot="+path)
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot of %s: %v", url, err)
	}
	return path
}

// Get sends GET url with the bearer token (none when empty) and returns
// the status and the body.
func Get(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// MetricSum sums the samples of metric name, in Prometheus' text format,
// whose line contains label.
func MetricSum(body, name, label string) float64 {
	var s float64
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, name+"{") || !strings.Contains(l, label) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v); err == nil {
			s += v
		}
	}
	return s
}

package web

import (
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/internal/webtest"
)

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
	bin := webtest.Chromium(t)
	srv, j := running(t)
	for deadline := time.Now().Add(10 * time.Second); len(j.Checkpoints().Completed) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint in 10s")
		}
	}
	url := srv.URL + "/?token=" + token + "#/jobs/" + j.ID()
	dom := webtest.Load(t, bin, url, "--dump-dom")
	if m := webtest.JobName.FindStringSubmatch(dom); m == nil || m[1] != "web test" || m[2] != "RUNNING" {
		t.Fatalf("the page does not name the running job: %v\n%s", m, dom)
	}
	rows := webtest.VertexRow.FindAllStringSubmatch(dom, -1)
	ov := j.Overview()
	if len(rows) != len(ov.Vertices) {
		t.Fatalf("%d vertex rows for %d vertices\n%s", len(rows), len(ov.Vertices), dom)
	}
	for i, r := range rows {
		if r[1] != ov.Vertices[i].Name {
			t.Errorf("row %d names %q, want %q", i, r[1], ov.Vertices[i].Name)
		}
		in, out := webtest.Atoi(t, r[2]), webtest.Atoi(t, r[3])
		t.Logf("vertex %s: records in %d, out %d", r[1], in, out)
		if (i == 0 && out == 0) || (i > 0 && in == 0) {
			t.Errorf("vertex %s shows no records: in %d, out %d", r[1], in, out)
		}
	}
	if !strings.Contains(dom, `<svg id="graph"`) || strings.Count(dom, `<g class="vertex"`) != len(ov.Vertices) {
		t.Errorf("the graph does not draw the %d vertices\n%s", len(ov.Vertices), dom)
	}
	m := webtest.Completed.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no checkpoint count in\n%s", dom)
	}
	first := webtest.Atoi(t, m[1])
	t.Logf("screenshot %s", webtest.Screenshot(t, bin, url, "web-ui-job.png"))
	dom = webtest.Load(t, bin, url, "--dump-dom")
	m = webtest.Completed.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no checkpoint count in the second load\n%s", dom)
	}
	if second := webtest.Atoi(t, m[1]); second <= first {
		t.Errorf("completed checkpoints %d then %d: no growth", first, second)
	} else {
		t.Logf("completed checkpoints %d then %d", first, second)
	}
}

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/internal/browser"
)

// probeScript is added to a copy of the page (the report itself has no
// script): it measures every plot as laid out by the browser and writes the
// figures into the DOM, where --dump-dom shows them.
const probeScript = `<script>
(function () {
  var out = [];
  document.querySelectorAll('svg[data-plot]').forEach(function (s) {
    var r = s.getBoundingClientRect();
    var drawn = 0;
    s.querySelectorAll('g[clip-path] path, g[clip-path] circle').forEach(function (p) {
      var b = p.getBBox();
      if ((p.tagName !== 'path' || (p.getAttribute('d') || '').length > 0) && (b.width > 0 || b.height > 0)) { drawn++; }
    });
    out.push({name: s.getAttribute('data-plot'), width: r.width, height: r.height, drawn: drawn});
  });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`

type probe struct {
	Name          string
	Width, Height float64
	Drawn         int
}

// TestBrowserRendersEveryPlot renders the page in headless Chromium and
// checks that every plot is laid out with a size and draws its data, and
// that a screenshot of the page is not blank.
func TestBrowserRendersEveryPlot(t *testing.T) {
	s := makeSynth(t, [3]int{16, 12, 5}, [3]float64{10, 10, 5}, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}, 5, 60, 10, 3)
	r, err := Compute(context.Background(), s.input(), nil)
	require.NoError(t, err)
	var page bytes.Buffer
	require.NoError(t, r.WriteHTML(&page))
	want := plotNames(t, page.String())
	require.GreaterOrEqual(t, len(want), 14)

	dir := t.TempDir()
	pagePath := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(pagePath, page.Bytes(), 0o644))
	probePath := filepath.Join(dir, "probe.html")
	withProbe := strings.Replace(page.String(), "</body>", probeScript+"</body>", 1)
	require.NoError(t, os.WriteFile(probePath, []byte(withProbe), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The page as it is: every plot is in the DOM.
	dom, err := browser.Browser(ctx, t, "file://"+pagePath, "--dump-dom")
	require.NoError(t, err)
	for _, name := range want {
		assert.Contains(t, string(dom), `data-plot="`+name+`"`)
	}

	// The probe copy: sizes and drawn elements as laid out.
	dom, err = browser.Browser(ctx, t, "file://"+probePath, "--window-size=1280,2000", "--dump-dom")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`).FindSubmatch(dom)
	require.NotNil(t, m, "the probe found nothing")
	var got []probe
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got))
	seen := map[string]probe{}
	for _, p := range got {
		seen[p.Name] = p
	}
	for _, name := range want {
		p, ok := seen[name]
		if assert.True(t, ok, "plot %s not laid out", name) {
			assert.Positive(t, p.Width, "plot %s width", name)
			assert.Positive(t, p.Height, "plot %s height", name)
			assert.Positive(t, p.Drawn, "plot %s draws nothing", name)
		}
	}

	// A screenshot of the page is produced and is not blank.
	colours, err := browser.ScreenshotColours(ctx, t, "file://"+pagePath, 1280, 1600)
	require.NoError(t, err)
	assert.Greater(t, colours, 50, "the screenshot looks blank")
}

// plotNames returns the data-plot names of a page.
func plotNames(t testing.TB, page string) []string {
	t.Helper()
	var names []string
	for _, m := range regexp.MustCompile(`<svg [^>]*data-plot="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		names = append(names, m[1])
	}
	return names
}

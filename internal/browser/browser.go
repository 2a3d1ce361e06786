// Package browser runs headless Chromium for the tests that look at a page
// as a person would (the validation report, its view URL): a throw-away
// profile, no network chatter, and a check that a screenshot is not blank.
package browser

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Chromium returns the path of a Chromium binary (Debian's chromium), or ""
// when there is none; browser tests skip then.
func Chromium() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser runs headless Chromium on url with a throw-away profile and
// extra flags (such as --dump-dom or --screenshot=FILE) and returns its
// standard output. It skips the test when Chromium is not installed.
func Browser(ctx context.Context, tb testing.TB, url string, flags ...string) ([]byte, error) {
	tb.Helper()
	bin := Chromium()
	if bin == "" {
		tb.Skip("chromium not found (/usr/bin/chromium or chromium in PATH): install Debian's chromium to run the browser test")
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + tb.TempDir()}
	args = append(append(args, flags...), url)
	return exec.CommandContext(ctx, bin, args...).Output()
}

// ScreenshotColours takes a screenshot of url (width × height) and returns
// the number of distinct colours on a 4-pixel lattice of it: a blank page
// has one or two.
func ScreenshotColours(ctx context.Context, tb testing.TB, url string, width, height int) (int, error) {
	tb.Helper()
	shot := filepath.Join(tb.TempDir(), "shot.png")
	size := "--window-size=" + strconv.Itoa(width) + "," + strconv.Itoa(height)
	if _, err := Browser(ctx, tb, url, size, "--screenshot="+shot); err != nil {
		return 0, err
	}
	f, err := os.Open(shot)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return 0, err
	}
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
		}
	}
	return len(colours), nil
}

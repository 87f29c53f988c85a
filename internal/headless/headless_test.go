package headless

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The checker sees what it must: a console error, a failed load, and a
// script's value.
func TestLoadReportsErrors(t *testing.T) {
	chromium := Find()
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "p.html")
	html := `<html><body><script>console.error("boom")</script><img src="file:///nonexistent/x.png"><svg><path d="M0 0L9 9"/></svg></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Load(ctx, chromium, "file://"+page, "document.querySelectorAll('path').length", 800, filepath.Join(dir, "profile"))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(res.Errors, "\n")
	if !strings.Contains(all, "boom") || !strings.Contains(all, "nonexistent") {
		t.Errorf("errors seen: %q; want the console error and the failed load", res.Errors)
	}
	if string(res.Eval) != "1" {
		t.Errorf("script value %s, want 1", res.Eval)
	}
	if len(res.Screenshot) < 100 {
		t.Error("no screenshot")
	}
}

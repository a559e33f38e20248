//go:build unix

// Package docsite tests the built documentation site (make docs: mkdocs.yml,
// docs/, the API reference of docs/api/) in headless Chromium.
package docsite

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yutenv/yutenv/internal/browsertest"
)

// site returns the built site's folder, named by YUTENV_DOCS_SITE (make
// test's docs lane sets it after make docs), or skips the test.
func site(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("YUTENV_DOCS_SITE")
	if dir == "" {
		t.Skip("YUTENV_DOCS_SITE is not set: build the site with make docs and name its folder (make test's docs lane does both)")
	}
	_, err := os.Stat(filepath.Join(dir, "index.html"))
	require.NoError(t, err, "YUTENV_DOCS_SITE=%s holds no built site", dir)
	return dir
}

// serve serves the site's folder on loopback, as `mkdocs serve` would.
func serve(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// firstHeading is the text of a Markdown file's first '# ' line.
func firstHeading(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^# (.+)$`).FindSubmatch(b)
	require.NotNil(t, m, "%s has no '# ' heading", path)
	return strings.TrimSpace(string(m[1]))
}

// TestSiteInBrowser loads the built site in headless Chromium: the home
// page (README.md), a guide and an API page show their headings, then the
// site's search, typed into as a user would, lists the reference's entry of
// yutenv.make.
func TestSiteInBrowser(t *testing.T) {
	dir := site(t)
	bin := browsertest.Chromium(t)
	base := serve(t, dir)
	ctx := browsertest.Browser(t, bin)
	repo := filepath.Join("..", "..")

	pages := []struct{ path, h1 string }{
		{"/", firstHeading(t, filepath.Join(repo, "README.md"))},
		{"/RULES/", firstHeading(t, filepath.Join(repo, "docs", "RULES.md"))},
		{"/api/toplevel/", firstHeading(t, filepath.Join(repo, "docs", "api", "toplevel.md"))},
	}
	for _, p := range pages {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+p.path)), "load %s", p.path)
		h1, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`article h1`)))
		require.NoError(t, err, "the heading of %s", p.path)
		assert.Equal(t, p.h1, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(h1), "¶")), "the heading of %s", p.path)
	}

	// The API page documents make, with its signature.
	makeDoc, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[id="yutenv.make"]`)))
	require.NoError(t, err, "the reference's entry of yutenv.make")
	assert.Contains(t, makeDoc, "make", "the entry names the function")

	// The search: type a query into the search box, wait for the results.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/RULES/"),
		chromedp.WaitVisible(chromedp.CSS(`input.md-search__input`)),
		chromedp.Click(chromedp.CSS(`input.md-search__input`)),
		chromedp.SendKeys(chromedp.CSS(`input.md-search__input`), "make"),
		chromedp.WaitVisible(chromedp.CSS(`.md-search-result__item`)),
	), "search for 'make'")
	// The list fills in as the search worker answers: read it until the entry is there, or the
	// browser's time is up.
	var hrefs []string
	found := false
	for ; !found && ctx.Err() == nil; time.Sleep(250 * time.Millisecond) {
		var err error
		hrefs, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.md-search-result__item a')].map(a => a.href)`))
		require.NoError(t, err, "read the search results")
		for _, h := range hrefs {
			u, err := url.Parse(h)
			found = found || err == nil && u.Path == "/api/toplevel/" && u.Fragment == "yutenv.make"
		}
	}
	assert.True(t, found, "the search for 'make' lists the reference's yutenv.make; it lists %v", hrefs)
}

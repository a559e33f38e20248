package mdgen

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLinef(t *testing.T) {
	tests := []struct {
		name  string
		lines func(p *Page)
		want  string
	}{
		{"empty", func(*Page) {}, ""},
		{"plain", func(p *Page) { p.Linef("# Title"); p.Linef("") }, "# Title\n\n"},
		{"args", func(p *Page) { p.Linef("layout %d, `%s`", 2, "compact") }, "layout 2, `compact`\n"},
		{"percent", func(p *Page) { p.Linef("100%% of %d", 3) }, "100% of 3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Page
			tt.lines(&p)
			assert.Equal(t, tt.want, p.String())
		})
	}
}

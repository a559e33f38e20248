package israce

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScale(t *testing.T) {
	if Enabled {
		assert.Equal(t, 3, Scale(100, 3))
	} else {
		assert.Equal(t, 100, Scale(100, 3))
	}
}

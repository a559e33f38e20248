package israce

// Scale returns n, or small under the race detector: the size of a test
// whose point is results at scale, trimmed under -race.
func Scale(n, small int) int {
	if Enabled {
		return small
	}
	return n
}

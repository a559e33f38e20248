// Command gendocs writes docs/OBSERVATIONS.md to standard output from the
// observation spaces of package obs. Run it through "go generate ./obs".
package main

import (
	"fmt"
	"os"

	"github.com/yutenv/yutenv/obs"
)

func main() {
	if err := obs.Markdown(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

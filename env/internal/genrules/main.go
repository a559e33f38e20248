// Command genrules writes docs/RULES.md to standard output from the tables of
// package env. Run it through "go generate ./env".
package main

import (
	"fmt"
	"os"

	"github.com/yutenv/yutenv/env"
)

func main() {
	if err := env.RulesMarkdown(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "genrules:", err)
		os.Exit(1)
	}
}

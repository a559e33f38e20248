package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
)

func init() {
	commands["net"] = command{summary: "describe a network shipped inside the binary (az) or write out its file", run: runNet}
}

// netInfo is what "yutenv net NAME" says of a shipped network.
type netInfo struct {
	Name      string `json:"name"`
	SHA256    string `json:"sha256"`
	Bytes     int    `json:"bytes"`
	Tier      string `json:"tier"`
	ObsLayout int    `json:"obs_layout"`
	Rules     string `json:"rules"`
	Hidden    []int  `json:"hidden"`
}

func runNet(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("net", "NAME [flags]\n\nDescribes a network shipped inside the binary (NAME: az, the network of agent az) or, with --out,\nwrites its yutenv-net file, to play it as net:FILE or read it elsewhere (python -m yutenv.az.fit\nand yutenv.az.train take --init az themselves). The bytes are the ones agent az plays,\nchecked against their declared SHA-256.", stderr)
	out := fs.String("out", "", "write the network's yutenv-net file to `FILE` (atomically; '-' for standard output)")
	asJSON := fs.Bool("json", false, "describe it as one JSON object instead of text")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	if name := fs.Arg(0); name != nnet.AZName {
		return fmt.Errorf("no shipped network %q: the binary ships %s", name, nnet.AZName)
	}
	s, err := nnet.AZ()
	if err != nil {
		return err
	}
	b, err := nnet.AZFile()
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err := stdout.Write(b)
		return err
	}
	if *out != "" {
		if err := writeAtomic(*out, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	info := netInfo{Name: nnet.AZName, SHA256: s.SHA256, Bytes: len(b), Tier: s.Net.Tier.String(), ObsLayout: obs.LayoutVersion, Rules: s.Net.Rules}
	for _, l := range s.Net.Trunk {
		info.Hidden = append(info.Hidden, l.Out)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(info)
	}
	fmt.Fprintf(stdout, "%s: %d bytes, SHA-256 %s\ntier %s (observation layout %d), rules %q, trunk %v\n",
		info.Name, info.Bytes, info.SHA256, info.Tier, info.ObsLayout, info.Rules, info.Hidden)
	if *out != "" {
		fmt.Fprintf(stdout, "written to %s\n", *out)
	}
	return nil
}

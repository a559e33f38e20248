package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/obs"
)

func init() {
	commands["net"] = command{summary: "list the networks shipped inside the binary (az, ...), describe one or write out its file", run: runNet}
}

// netInfo is what "yutenv net NAME" says of a shipped network.
type netInfo struct {
	Name        string `json:"name"`
	SHA256      string `json:"sha256"`
	Bytes       int    `json:"bytes"`
	Tier        string `json:"tier"`
	ObsLayout   int    `json:"obs_layout"`
	Rules       string `json:"rules"`
	Hidden      []int  `json:"hidden"`
	Recommended bool   `json:"recommended"`
}

// shippedInfo describes the shipped network of the given name and
// returns its file.
func shippedInfo(name string) (netInfo, []byte, error) {
	s, err := nnet.ShippedNet(name)
	if err != nil {
		return netInfo{}, nil, err
	}
	b, err := nnet.ShippedFile(name)
	if err != nil {
		return netInfo{}, nil, err
	}
	info := netInfo{Name: name, SHA256: s.SHA256, Bytes: len(b), Tier: s.Net.Tier.String(), ObsLayout: obs.LayoutVersion,
		Rules: s.Net.Rules, Recommended: name == nnet.Recommended}
	for _, l := range s.Net.Trunk {
		info.Hidden = append(info.Hidden, l.Out)
	}
	return info, b, nil
}

func runNet(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("net", "[NAME] [flags]\n\nLists the networks shipped inside the binary (with no NAME, or --list): each is an agent of its\nname (az, az,sims=200, ...) that plays one network file forever, its SHA-256 pinned in the binary;\nthe docs recommend one of them. With NAME, describes that network or, with --out, writes its\nyutenv-net file, to play it as net:FILE or read it elsewhere (python -m yutenv.az.fit and\nyutenv.az.train take --init NAME themselves). The bytes are the ones agent NAME plays, checked\nagainst their declared SHA-256.", stderr)
	out := fs.String("out", "", "write the network's yutenv-net file to `FILE` (atomically; '-' for standard output)")
	asJSON := fs.Bool("json", false, "describe it as one JSON object (the list: a JSON array of them) instead of text")
	list := fs.Bool("list", false, "list the shipped networks (the default with no NAME)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && *list) {
		fs.Usage()
		return errUsage
	}
	if fs.NArg() == 0 {
		if *out != "" {
			return fmt.Errorf("--out needs a NAME: the network to write (one of yutenv net --list)")
		}
		return listNets(stdout, *asJSON)
	}
	info, b, err := shippedInfo(fs.Arg(0))
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
	if *asJSON {
		return json.NewEncoder(stdout).Encode(info)
	}
	rec := ""
	if info.Recommended {
		rec = " (recommended)"
	}
	fmt.Fprintf(stdout, "%s%s: %d bytes, SHA-256 %s\ntier %s (observation layout %d), rules %q, trunk %v\n",
		info.Name, rec, info.Bytes, info.SHA256, info.Tier, info.ObsLayout, info.Rules, info.Hidden)
	if *out != "" {
		fmt.Fprintf(stdout, "written to %s\n", *out)
	}
	return nil
}

// listNets writes the table (or JSON array) of the shipped networks, in
// the order they were declared.
func listNets(stdout io.Writer, asJSON bool) error {
	infos := []netInfo{}
	for _, name := range nnet.ShippedNames() {
		info, _, err := shippedInfo(name)
		if err != nil {
			return err
		}
		infos = append(infos, info)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(infos)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSHA-256\tBYTES\tRULES\tTIER\tRECOMMENDED")
	for _, i := range infos {
		rec := ""
		if i.Recommended {
			rec = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", i.Name, i.SHA256, i.Bytes, i.Rules, i.Tier, rec)
	}
	return tw.Flush()
}

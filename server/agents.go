package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/yutenv/yutenv/env/agent"
	"github.com/yutenv/yutenv/luck"
	"github.com/yutenv/yutenv/nnet"
	"github.com/yutenv/yutenv/protocol"
)

// agentSpec is the one place where a client names an agent (make's
// opponent, analyse's agent, searching n states): it parses text, bounds
// its search by the request's budget (Budget.Search) and, for net:NAME, opens the network through the
// server's folder policy (Config.NetDirs), one file at a time. It returns
// the spec as the client named it (for replies) and the spec to build the
// agents from, which names the network by its resolved path (the agents
// load it from the process's cache): no file system call sees the
// client's NAME except the policy's own.
func (c *conn) agentSpec(ctx context.Context, field, text string, n int) (sp, build agent.Spec, e *Error) {
	sp, err := agent.ParseSpec(text)
	if err != nil {
		return sp, build, errorf(protocol.CodeBadRequest, "params.%s: %v", field, err)
	}
	if e := c.budget.Search(field, text, sp, n); e != nil {
		return sp, build, e
	}
	if sp.Name == "optimal" { // its PATH would open any file on the server's machine
		return sp, build, errorf(protocol.CodeBadRequest, "params.%s: %q: the server does not open solved tables for its clients (agent optimal plays only in the command line tools)", field, text)
	}
	if sp.Name != "net" {
		return sp, sp, nil
	}
	_, path, err := c.netLoader(ctx)(sp.Path)
	switch {
	case errors.Is(err, errShuttingDown):
		return sp, build, errorf(protocol.CodeShuttingDown, "params.%s: %v", field, err)
	case err != nil:
		return sp, build, errorf(protocol.CodeBadNet, "params.%s: %v", field, err)
	}
	build = sp
	build.Path = path
	return sp, build, nil
}

// errShuttingDown is wrapped by a netLoader's error when the server shut
// down while the load waited for its turn.
var errShuttingDown = errors.New("the server is shutting down")

// netLoader opens a network file a client names (an agent's net:NAME, the
// luck's value net:NAME) through the server's folder policy
// (Config.NetDirs), one file at a time; it returns the net and the path it
// resolved NAME to.
func (c *conn) netLoader(ctx context.Context) luck.Loader {
	return func(name string) (*nnet.Net, string, error) {
		if err := c.srv.netLoads.Acquire(ctx, 1); err != nil {
			return nil, "", fmt.Errorf("%w: %w", errShuttingDown, err)
		}
		defer c.srv.netLoads.Release(1)
		return c.srv.nets.Load(name)
	}
}

// netCode is the code of an error an agent returned while it played: a
// network's fault (a NaN output) is the client's (bad_net), anything else
// is def; agent az asked to play rules it was not trained for is a bad request.
func netCode(err error, def protocol.Code) protocol.Code {
	if errors.Is(err, nnet.ErrRules) { // az under rules its network was not trained for: the client's choice
		return protocol.CodeBadRequest
	}
	if errors.Is(err, nnet.ErrNet) || errors.Is(err, nnet.ErrRefused) || errors.Is(err, nnet.ErrNoSuchNet) {
		return protocol.CodeBadNet
	}
	return def
}

package server

import (
	"errors"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/dataset"
	"github.com/yutenv/yutenv/env"
	"github.com/yutenv/yutenv/internal/msgp"
	_ "github.com/yutenv/yutenv/nnet" // the agent spec net:PATH, for opponents
	"github.com/yutenv/yutenv/obs"
	"github.com/yutenv/yutenv/protocol"
)

// selfplayNew starts a network-guided self-play run (package az) whose
// leaves the client evaluates through selfplay_next.
func (c *conn) selfplayNew(p []byte) *Error {
	cfg := az.DefaultConfig()
	cfg.Software = "yutenv server"
	e := c.eachKeyOf(protocol.SelfplayNewKeys, p, func(k int, r *msgp.Reader) error {
		return cfg.SetParam(protocol.SelfplayNewKeys[k], r)
	})
	if e != nil {
		return e
	}
	if cfg.Out == "" {
		return errorf(protocol.CodeBadRequest, "missing params.out (the dataset directory, on the server's machine)")
	}
	out, err := c.srv.outs.Path(cfg.Out)
	if err != nil {
		return errorf(protocol.CodeBadRequest, "params.out: %v", err)
	}
	cfg.Out = out
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = cfg.InFlight
	}
	bytes, e := c.srv.limits.Selfplay(cfg, len(c.runs))
	if e != nil {
		return e
	}
	if !c.srv.reserveSelfplay(bytes, c.budget.RunBytes) {
		return errorf(protocol.CodeLimitExceeded, "the self-play runs already held take the server's --max-selfplay-bytes %d; this one needs about %d bytes more. Close a run or retry later",
			c.budget.RunBytes, bytes)
	}
	run, err := az.Start(cfg)
	if err != nil {
		c.srv.releaseSelfplay(bytes)
	}
	switch {
	case errors.Is(err, az.ErrConfig) || errors.Is(err, dataset.ErrDataset) || errors.Is(err, env.ErrInvalidRules):
		return errorf(protocol.CodeBadRequest, "%v", err)
	case err != nil:
		return errorf(protocol.CodeBadRequest, "params.out: %v", err)
	}
	if c.runs == nil {
		c.runs = map[uint64]*selfplayRun{}
	}
	c.nextHandle++
	id := c.nextHandle
	c.runs[id] = &selfplayRun{Run: run, bytes: bytes}
	cfg = run.Config()
	sum := run.Summary()
	return c.result(protocol.SelfplayNewResult{
		ID: id, ObsSize: run.ObsSize(), ObsLayout: obs.LayoutVersion, Actions: env.NumActions, Tier: cfg.Tier.String(),
		Rules: cfg.Rules.String(), Games: cfg.Games, FirstGame: cfg.FirstGame, GamesDone: sum.Games, InFlight: cfg.InFlight,
		MaxBatch: cfg.MaxBatch, EvalTimeout: cfg.EvalTimeout.Seconds(), Out: cfg.Out,
	})
}

// runParams reads params holding a run id plus the keys fn accepts.
func (c *conn) runParams(p []byte, fn func(k int, r *msgp.Reader) error) (*selfplayRun, uint64, *Error) {
	var id uint64
	var set bool
	e := c.eachKeyOf(protocol.RunKeys, p, func(k int, r *msgp.Reader) (err error) {
		if k == protocol.RunID {
			id, err = r.Uint64()
			set = true
			return err
		}
		if fn == nil {
			return msgp.ErrUnknownKey
		}
		return fn(k, r)
	})
	if e != nil {
		return nil, id, e
	}
	if !set {
		return nil, id, errorf(protocol.CodeBadRequest, "missing params.id")
	}
	run, ok := c.runs[id]
	if !ok {
		return nil, id, errorf(protocol.CodeUnknownHandle, "no self-play run %d on this connection", id)
	}
	return run, id, nil
}

// selfplayNext answers the run's last batch (priors, values) and returns
// the next batch, or done.
func (c *conn) selfplayNext(p []byte) *Error {
	var hasP, hasV bool
	run, _, e := c.runParams(p, func(k int, r *msgp.Reader) (err error) {
		switch k {
		case protocol.RunPriors:
			c.priors, err = r.F32Bin(c.priors)
			hasP = true
		case protocol.RunValues:
			c.values, err = r.F32Bin(c.values)
			hasV = true
		}
		return err
	})
	if e != nil {
		return e
	}
	var priors, values []float32
	if hasP {
		priors = c.priors
	}
	if hasV {
		values = c.values
	}
	b, err := run.Next(priors, values)
	var ae *az.AnswerError
	switch {
	case errors.As(err, &ae):
		return errorf(protocol.CodeBadRequest, "params.%s: %s", ae.Field, ae.Msg)
	case errors.Is(err, az.ErrTimeout):
		return errorf(protocol.CodeEvalTimeout, "%v", err)
	case err != nil:
		return errorf(protocol.CodeInternal, "the run failed: %v", err)
	}
	sum := run.Summary()
	c.out = msgp.AppendMapHeader(c.out, 8)
	c.out = msgp.AppendStr(c.out, "n")
	c.out = msgp.AppendInt(c.out, int64(b.N))
	c.out = msgp.AppendStr(c.out, "obs")
	c.out = msgp.AppendF32Bin(c.out, b.Obs)
	c.out = msgp.AppendStr(c.out, "mask")
	c.out = msgp.AppendBin(c.out, b.Mask)
	c.out = msgp.AppendStr(c.out, "done")
	c.out = msgp.AppendBool(c.out, sum.Done)
	c.out = msgp.AppendStr(c.out, "games")
	c.out = msgp.AppendInt(c.out, int64(sum.Games))
	c.out = msgp.AppendStr(c.out, "decisions")
	c.out = msgp.AppendInt(c.out, int64(sum.Decisions))
	c.out = msgp.AppendStr(c.out, "leaves")
	c.out = msgp.AppendInt(c.out, sum.Leaves)
	c.out = msgp.AppendStr(c.out, "batches")
	c.out = msgp.AppendInt(c.out, sum.Batches)
	return nil
}

// selfplayClose cancels a run (its finished shards stay) and forgets it.
func (c *conn) selfplayClose(p []byte) *Error {
	run, id, e := c.runParams(p, nil)
	if e != nil {
		return e
	}
	c.closeRun(id, run)
	c.out = msgp.AppendMapHeader(c.out, 0)
	return nil
}

// closeRuns cancels every run of the connection (it is going away).
func (c *conn) closeRuns() {
	for id, run := range c.runs {
		c.closeRun(id, run)
	}
}

// selfplayRun is a connection's self-play run and the memory it reserved
// from the server's self-play budget (Limits.Selfplay).
type selfplayRun struct {
	*az.Run
	bytes int64
}

// closeRun cancels a run, forgets it and gives back its memory.
func (c *conn) closeRun(id uint64, run *selfplayRun) {
	run.Close()
	delete(c.runs, id)
	c.srv.releaseSelfplay(run.bytes)
}

// reserveSelfplay takes bytes from the self-play memory budget of limit
// bytes; false when it would be exceeded (nothing is taken).
func (s *Server) reserveSelfplay(bytes, limit int64) bool {
	s.spMu.Lock()
	defer s.spMu.Unlock()
	if s.spBytes+bytes > limit {
		return false
	}
	s.spBytes += bytes
	return true
}

// releaseSelfplay gives bytes back to the self-play memory budget.
func (s *Server) releaseSelfplay(bytes int64) {
	s.spMu.Lock()
	s.spBytes -= bytes
	s.spMu.Unlock()
}

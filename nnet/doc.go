// Package nnet reads policy-value networks in the yutenv-net file format
// (written by the Python package's yutenv.az.export_net and yutenv.nets.export,
// from its own networks and from Stable-Baselines3 or torch policies;
// docs/FORMATS.md),
// evaluates them in Go without allocating, and plays them as agents.
//
// Importing the package registers the agent spec
//
//	net:PATH                     the policy's most likely legal action, no search
//	net:PATH,sims=N[,c=,workers=,temp=]   MCTS guided by the net (agent.NewMCTS)
//
// with package agent, so every command and the server accept it. The
// observation is the net's tier for the seat to move; the priors are the
// softmax of the legal actions' logits and the value tanh of the value
// head (the mover's expected outcome). The layers run on the kernel that
// Kernel names (AVX-512 or AVX2 assembly on amd64, else an axpy loop), all
// giving the same bits.
//
//	n, err := nnet.Load("runs/gen3/net.ynet")
//	ev := nnet.NewEvaluator(n)          // an agent.Evaluator
//	a, err := agent.New("net:runs/gen3/net.ynet,sims=64", seed)
package nnet

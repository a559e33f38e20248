package nnet

import (
	"fmt"
	"strings"

	"github.com/yutenv/yutenv/internal/detmath"
)

// Activation is the function a net applies to the output of every hidden
// layer (trunk, policy trunk and value trunk alike; never to the heads).
// Each is computed in float32 with the same bits on every architecture:
// the exponential ones through detmath, in float64, rounded once.
type Activation uint8

// The activations a network file may name (docs/FORMATS.md), each as
// PyTorch defines it with its default parameters.
const (
	// ReLU is max(x, 0): the only activation of version 1 files.
	ReLU Activation = iota
	// Tanh is tanh(x) (Stable-Baselines3's default for PPO).
	Tanh
	// LeakyReLU is x for x ≥ 0, else LeakySlope·x.
	LeakyReLU
	// ELU is x for x > 0, else exp(x) - 1 (alpha 1).
	ELU
	// SiLU is x·sigmoid(x) = x / (1 + exp(-x)).
	SiLU
)

// LeakySlope is LeakyReLU's slope below zero: torch.nn.LeakyReLU's
// default, the only one the format holds.
const LeakySlope float32 = 0.01

// activationNames are the activations' names in a file, by Activation.
var activationNames = [...]string{ReLU: "relu", Tanh: "tanh", LeakyReLU: "leaky_relu", ELU: "elu", SiLU: "silu"}

// String returns the activation's name in a file.
func (a Activation) String() string {
	if int(a) < len(activationNames) {
		return activationNames[a]
	}
	return fmt.Sprintf("Activation(%d)", uint8(a))
}

// Activations returns the names of every activation, in order.
func Activations() []string { return append([]string(nil), activationNames[:]...) }

// ParseActivation returns the activation of a name (Activations).
func ParseActivation(name string) (Activation, error) {
	for a, s := range activationNames {
		if s == name {
			return Activation(a), nil
		}
	}
	return 0, fmt.Errorf("activation %q, want one of %s", clip(name), strings.Join(activationNames[:], ", "))
}

// apply replaces every value of v by the activation of it.
func (a Activation) apply(v []float32) {
	switch a {
	case ReLU:
		for j, x := range v {
			if x < 0 {
				v[j] = 0
			}
		}
	case Tanh:
		for j, x := range v {
			v[j] = float32(detmath.Tanh(float64(x)))
		}
	case LeakyReLU:
		for j, x := range v {
			if x < 0 {
				v[j] = x * LeakySlope
			}
		}
	case ELU:
		for j, x := range v {
			if x < 0 {
				v[j] = float32(detmath.Exp(float64(x)) - 1)
			}
		}
	case SiLU:
		for j, x := range v {
			v[j] = float32(float64(x) / (1 + detmath.Exp(-float64(x))))
		}
	}
}

package protocol

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Desc is the declaration of one protocol method, without its types'
// parameters: everything the server's dispatch and statistics, the Go
// client, the generated docs (docs/PROTOCOL.md's method reference) and the
// generated Python module (python/yutenv/_protocol.py) know about it.
type Desc struct {
	// Name is the method's name on the wire.
	Name string
	// Doc is a one-line description, for the generated reference.
	Doc string
	// Params is the struct whose msgpack tags name the params, in the
	// order error messages list them (no fields: the method takes none).
	Params reflect.Type
	// Result is the struct whose msgpack tags name the result's keys (no
	// fields: the result is the empty map {}). A result with several forms
	// embeds one struct per form.
	Result reflect.Type
	// Handshake marks hello: the one method allowed before hello, after
	// which a refused token or a full server closes the connection.
	Handshake bool
	// Draws names the budgets of the server's limits policy the method
	// draws on beyond its frame.
	Draws Draw
}

// Method is the typed declaration of a method whose params are a P and
// whose result is an R: the server binds a handler of *P to it and the Go
// client calls it with a *P and gets an *R (client.Do), both type-checked.
type Method[P, R any] struct{ Desc }

// declare declares a method with params P and result R, drawing on the
// budgets d (opts adjust the declaration: handshake), and appends it to
// methods. A method's id is thus its place in the var block below: Go
// initialises a package's variables in declaration order, except that a
// variable waits for the ones its initialiser depends on, and a
// declaration depends only on methods and sealed, which have no
// initialiser (TestMethodOrder pins the order). It panics once the
// package is initialised: a method is declared in that block or nowhere.
func declare[P, R any](name, doc string, d Draw, opts ...func(*Desc)) Method[P, R] {
	if sealed {
		panic(fmt.Sprintf("protocol: method %q declared after init; declare methods in the var block of method.go", name))
	}
	m := Method[P, R]{Desc{Name: name, Doc: doc, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](), Draws: d}}
	for _, o := range opts {
		o(&m.Desc)
	}
	methods = append(methods, m.Desc)
	return m
}

// methods lists every method's declaration in id order (a method's id
// indexes the server's latency histograms and orders hello's methods),
// appended by declare as the declarations run.
var methods []Desc

// sealed is set once the package's variables are initialised: declare
// then refuses to run.
var sealed bool

func init() { sealed = true }

// Draw is a budget of the server's limits policy beyond the request's
// frame. A method declares the ones it draws on (Desc.Draws).
type Draw uint8

// The budgets a method may draw on.
const (
	// DrawRows: the request carries or makes packed states, at most
	// the policy's state rows.
	DrawRows Draw = 1 << iota
	// DrawReply: the reply may be far larger than the request, up to
	// max_frame: its bytes are reserved from --max-inflight-bytes.
	DrawReply
	// DrawOpponent: the method names an agent that searches inside steps,
	// at most --max-opponent-sims a decision.
	DrawOpponent
	// DrawSearch: the request searches its states: --max-opponent-sims a
	// decision, --max-analyse-sims the request, --analyse-workers cores.
	DrawSearch
	// DrawRuns: the method starts a self-play run, whose memory is held
	// from --max-selfplay-bytes until it is closed.
	DrawRuns
)

// drawNames name the draws, for the generated reference.
var drawNames = [...]string{"rows", "reply", "opponent", "search", "runs"}

// Names returns the names of the draws of d, in declaration order.
func (d Draw) Names() []string {
	var out []string
	for i, n := range drawNames {
		if d&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// None is the params or result of a method that has none ({}).
type None = struct{}

// The protocol's methods, in id order: this block is their one list
// (declare appends each to Methods as it runs). A new method goes at the
// end; TestMethodOrder pins the order.
var (
	Hello = declare[HelloParams, HelloResult]("hello", "Open the connection: protocol version, token; the server's limits and capabilities.", 0, handshake)
	Ping  = declare[None, None]("ping", "Answer {}.", 0)
	Make  = declare[MakeParams, MakeResult]("make", "Create a handle of N envs.", DrawOpponent)
	Reset = declare[ResetParams, ResetResult]("reset", "Start a new episode in every env of a handle.", DrawReply)
	Step  = declare[StepParams, StepResult]("step", "Apply one action per env of a handle.", DrawReply)
	Close = declare[HandleParams, None]("close", "Free a handle.", 0)
	Stats = declare[None, StatsResult]("stats", "The server's counters and per-method latency percentiles.", 0)
	Save  = declare[IndexParams, StateResult]("save", "One env's game state as the engine's versioned blob.", 0)
	Load  = declare[LoadParams, LoadResult]("load", "Replace one env's game with a saved state.", 0)
	// Render's result has one form per format.
	Render        = declare[RenderParams, RenderResult]("render", "One env's position as text, SVG or an RGB image.", DrawReply)
	Observe       = declare[ObserveParams, ObserveResult]("observe", "Every env's observation and mask as one seat sees them.", DrawReply)
	SelfplayNew   = declare[SelfplayNewParams, SelfplayNewResult]("selfplay_new", "Start a self-play run whose leaves the client evaluates.", DrawRuns)
	SelfplayNext  = declare[SelfplayNextParams, SelfplayNextResult]("selfplay_next", "Answer a run's last batch and get the next one.", 0)
	SelfplayClose = declare[RunParams, None]("selfplay_close", "Cancel a self-play run and forget it.", 0)
	Game          = declare[GameParams, GameResult]("game", "Declare a rule set for the state methods.", 0)
	Initial       = declare[InitialParams, StatesResult]("initial", "N new games as packed states.", DrawRows|DrawReply)
	Apply         = declare[ApplyParams, StatesResult]("apply", "Apply one action, or one throw, to every packed state.", DrawRows|DrawReply)
	Query         = declare[QueryParams, QueryResult]("query", "Phase, seat to move and optionally mask, returns, observations of packed states.", DrawRows|DrawReply)
	Describe      = declare[StateParams, DescribeResult]("describe", "One packed state's position, JSON form and text board.", 0)
	Position      = declare[PositionParams, StateResult]("position", "A packed state from a readable position.", 0)
	StateSave     = declare[StateParams, BlobResult]("state_save", "One packed state as the engine's saved-state blob.", 0)
	StateLoad     = declare[StateLoadParams, StateRulesResult]("state_load", "A saved-state blob as a packed state and its rules.", 0)
	Analyse       = declare[AnalyseParams, AnalyseResult]("analyse", "A built-in agent's action, policy and value at every packed state.", DrawRows|DrawReply|DrawSearch)
	OpponentStep  = declare[StepParams, StepResult]("opponent_step", "Apply the client-played opponents' actions to the envs waiting for them.", DrawReply)
	SetOpponents  = declare[SetOpponentsParams, SetOpponentsResult]("set_opponents", "Replace a handle's opponent mixture from each env's next episode on.", DrawOpponent)
	Share         = declare[ShareParams, ShareResult]("share", "Move a handle's rows and actions into a shared-memory region passed with the reply (Unix sockets).", 0)
)

// handshake marks a declaration as hello's.
func handshake(d *Desc) { d.Handshake = true }

// Methods returns the protocol's method declarations, in id order.
func Methods() []Desc { return slices.Clone(methods) }

// Keys returns the msgpack keys of a params or result struct t (nil: none),
// in declaration order; an embedded struct's keys are inlined.
func Keys(t reflect.Type) []string {
	if t == nil {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("msgpack"), ",")
		switch {
		case sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct:
			for _, k := range Keys(sf.Type) {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		case name != "" && name != "-" && sf.IsExported():
			keys = append(keys, name)
		}
	}
	return keys
}

// KeySet is the keys of a params struct read by hand, from its msgpack
// tags: key i is the struct's field i, so a reader switches on field
// positions and takes no key the struct does not declare.
type KeySet []string

// KeysOf returns the key set of P after checking that its fields are
// exactly fields, in order: the constants a reader switches on (its field
// positions) then match the struct, and a field added to the struct
// without a case in the reader fails at init. It panics otherwise.
func KeysOf[P any](fields ...string) KeySet {
	t := reflect.TypeFor[P]()
	var names []string
	for i := range t.NumField() {
		names = append(names, t.Field(i).Name)
	}
	keys := Keys(t)
	if !slices.Equal(names, fields) || len(keys) != len(fields) {
		panic(fmt.Sprintf("protocol: the reader of %v switches on fields %v, the struct has %v with keys %v", t, fields, names, keys))
	}
	return KeySet(keys)
}

// Index returns the position of key k, or -1.
func (ks KeySet) Index(k string) int { return slices.Index(ks, k) }

// Of returns the position of key k, or -1; it allocates nothing.
func (ks KeySet) Of(k []byte) int {
	for i, s := range ks {
		if s == string(k) {
			return i
		}
	}
	return -1
}

// The field positions of the params read by hand: a reader's switch cases,
// held to the structs by KeysOf.
const (
	StepHandle = iota
	StepActions
	StepInfo
	StepShared
	StepSeq
)

// The field positions of ResetParams.
const (
	ResetHandle = iota
	ResetSeed
	ResetOpts
	ResetInfo
	ResetShared
)

// The field positions of ResetOptions.
const (
	OptStart = iota
	OptSeat
)

// The field positions of SelfplayNextParams.
const (
	RunID = iota
	RunPriors
	RunValues
)

// The key sets of the params read by hand.
var (
	// StepKeys are step's params.
	StepKeys = KeysOf[StepParams]("Handle", "Actions", "Info", "Shared", "Seq")
	// ResetKeys are reset's params.
	ResetKeys = KeysOf[ResetParams]("Handle", "Seed", "Options", "Info", "Shared")
	// ResetOptKeys are reset's options.
	ResetOptKeys = KeysOf[ResetOptions]("Start", "Seat")
	// RunKeys are selfplay_next's params (selfplay_close takes the first).
	RunKeys = KeysOf[SelfplayNextParams]("ID", "Priors", "Values")
	// SelfplayNewKeys are selfplay_new's params: rules, tier, gumbel, seed,
	// out and az.Settings (a test holds them to it).
	SelfplayNewKeys = KeySet(Keys(reflect.TypeFor[SelfplayNewParams]()))
)

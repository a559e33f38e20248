package server

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/yutenv/yutenv/az"
	"github.com/yutenv/yutenv/positions"
)

// Method is the declaration of one protocol method: everything the server,
// its statistics, the generated docs (docs/PROTOCOL.md's method reference)
// and the generated Python module (python/yutenv/_protocol.py) know about
// it. A new method is one entry of methods (made by decoded or byHand)
// plus its handler.
type Method struct {
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
	// Hand marks a method whose params are read by hand, straight from the
	// frame (step and reset, which allocate nothing; selfplay_*, whose
	// params fill a configuration): Params then declares the keys that
	// reader takes, and a test holds it to them. The others' params are
	// decoded into Params (decodeParams) before the handler runs.
	Hand bool
	// Handshake marks hello: the one method allowed before hello, after
	// which a refused token or a full server closes the connection.
	Handshake bool
	// Draws names the budgets of the limits policy the method draws on
	// beyond its frame; the policy computes its requests' budget from
	// them (Limits.Budget), and a handler can spend no other.
	Draws Draw

	handle func(c *conn, params []byte) *Error
}

// decoded declares a method whose params are decoded into a P (by
// decodeParams, which refuses unknown keys and bad values) and whose result
// has the keys of R.
func decoded[P, R any](name, doc string, h func(*conn, *P) *Error) Method {
	return Method{Name: name, Doc: doc, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](),
		handle: func(c *conn, p []byte) *Error {
			var pr P
			if e := decodeParams(name, p, &pr); e != nil {
				return e
			}
			return h(c, &pr)
		}}
}

// byHand declares a method that reads its params by hand (Method.Hand):
// P and R declare the keys of its params and result.
func byHand[P, R any](name, doc string, h func(*conn, []byte) *Error) Method {
	return Method{Name: name, Doc: doc, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](), Hand: true, handle: h}
}

// Draw is a budget of the limits policy (Limits) beyond the request's
// frame. A method declares the ones it draws on (Method.Draws).
type Draw uint8

// The budgets a method may draw on.
const (
	// DrawRows: the request carries or makes packed states, at most
	// Limits.StateRows.
	DrawRows Draw = 1 << iota
	// DrawReply: the reply may be far larger than the request, up to
	// max_frame: its bytes are reserved from --max-inflight-bytes.
	DrawReply
	// DrawOpponent: the method names an agent that searches inside steps,
	// Limits.OpponentSims a decision.
	DrawOpponent
	// DrawSearch: the request searches its states: OpponentSims a
	// decision, AnalyseSims the request, SearchWorkers cores.
	DrawSearch
	// DrawRuns: the method starts a self-play run, whose memory is held
	// from Limits.SelfplayBytes until it is closed.
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

// draws declares the budgets m draws on.
func draws(d Draw, m Method) Method {
	m.Draws = d
	return m
}

// handshake marks m as hello.
func handshake(m Method) Method {
	m.Handshake = true
	return m
}

// none is the params or result of a method that has none ({}).
type none = struct{}

// methods declares the protocol's methods; a method's id (which indexes
// its latency histogram) is its position. The Python client and
// docs/PROTOCOL.md's method tables take their names and keys from here.
var methods = [...]Method{
	handshake(decoded[helloParams, helloResultT]("hello", "Open the connection: protocol version, token; the server's limits and capabilities.", (*conn).hello)),
	decoded[none, none]("ping", "Answer {}.", (*conn).ping),
	draws(DrawOpponent, decoded[makeParams, makeResult]("make", "Create a handle of N envs.", (*conn).makeHandle)),
	draws(DrawReply, byHand[resetParams, resetResult]("reset", "Start a new episode in every env of a handle.", (*conn).reset)),
	draws(DrawReply, byHand[stepParams, stepResult]("step", "Apply one action per env of a handle.", (*conn).step)),
	decoded[handleOnly, none]("close", "Free a handle.", (*conn).closeHandle),
	decoded[none, statsResultT]("stats", "The server's counters and per-method latency percentiles.", (*conn).statsResult),
	decoded[saveParams, stateResult]("save", "One env's game state as the engine's versioned blob.", (*conn).save),
	decoded[loadParams, loadResult]("load", "Replace one env's game with a saved state.", (*conn).load),
	draws(DrawReply, decoded[renderParams, renderResults]("render", "One env's position as text, SVG or an RGB image.", (*conn).render)),
	draws(DrawReply, decoded[observeParams, observeResult]("observe", "Every env's observation and mask as one seat sees them.", (*conn).observe)),
	draws(DrawRuns, byHand[selfplayNewParams, selfplayNewResult]("selfplay_new", "Start a self-play run whose leaves the client evaluates.", (*conn).selfplayNew)),
	byHand[selfplayNextParams, selfplayNextResult]("selfplay_next", "Answer a run's last batch and get the next one.", (*conn).selfplayNext),
	byHand[runOnly, none]("selfplay_close", "Cancel a self-play run and forget it.", (*conn).selfplayClose),
	decoded[gameParams, gameResult]("game", "Declare a rule set for the state methods.", (*conn).gameMethod),
	draws(DrawRows|DrawReply, decoded[initialParams, statesResult]("initial", "N new games as packed states.", (*conn).initialStates)),
	draws(DrawRows|DrawReply, decoded[applyParams, statesResult]("apply", "Apply one action, or one throw, to every packed state.", (*conn).applyStates)),
	draws(DrawRows|DrawReply, decoded[queryParams, queryResult]("query", "Phase, seat to move and optionally mask, returns, observations of packed states.", (*conn).queryStates)),
	decoded[oneStateParams, positions.Description]("describe", "One packed state's position, JSON form and text board.", (*conn).describeState),
	decoded[positionParams, stateResult]("position", "A packed state from a readable position.", (*conn).positionState),
	decoded[oneStateParams, blobResult]("state_save", "One packed state as the engine's saved-state blob.", (*conn).saveState),
	decoded[stateLoadParams, stateRulesResult]("state_load", "A saved-state blob as a packed state and its rules.", (*conn).loadState),
	draws(DrawRows|DrawReply|DrawSearch, decoded[analyseParams, analyseResult]("analyse", "A built-in agent's action, policy and value at every packed state.", (*conn).analyseStates)),
}

// Derived from methods by init (a handler may use them: a variable
// initialised from methods could not be).
var (
	// methodNames are the methods' names, by id.
	methodNames []string
	// methodIDs maps a name to its id; methodIDs[string(b)] does not allocate.
	methodIDs map[string]int
	// methodList is "hello, ping, ...", for the unknown-method error.
	methodList string
	// methodKeys maps a name to its params' keys, "a, b, c", for errors.
	methodKeys map[string]string
)

func init() {
	methodNames = make([]string, len(methods))
	methodIDs = make(map[string]int, len(methods))
	methodKeys = make(map[string]string, len(methods))
	for i := range methods {
		methodNames[i] = methods[i].Name
		methodIDs[methods[i].Name] = i
		methodKeys[methods[i].Name] = strings.Join(Keys(methods[i].Params), ", ")
	}
	methodList = strings.Join(methodNames, ", ")
	checkSelfplayKeys(selfplayNewKeys, az.Settings())
}

// checkSelfplayKeys panics unless keys, selfplay_new's declared params,
// are rules, tier, gumbel, seed, out and the settings: its reader's cases.
func checkSelfplayKeys(keys []string, settings []az.Setting) {
	want := []string{"rules", "tier", "gumbel", "seed", "out"}
	for _, s := range settings {
		want = append(want, s.Key)
	}
	got := slices.Clone(keys)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		panic(fmt.Sprintf("server: selfplay_new declares params %v, its reader takes %v", keys, want))
	}
}

// methodID returns the id of a method name, or -1.
func methodID(name []byte) int {
	if id, ok := methodIDs[string(name)]; ok {
		return id
	}
	return -1
}

// declaredKeys returns the params' keys method declares, "a, b, c" (""
// for none), for the error messages of the readers written by hand.
func declaredKeys(method string) string { return methodKeys[method] }

// Methods returns the protocol's method declarations, in id order.
func Methods() []Method { return slices.Clone(methods[:]) }

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

// keySet is the keys of a params struct read by hand, from its msgpack
// tags: key i is the struct's field i, so a reader switches on field
// positions and takes no key the struct does not declare.
type keySet []string

// keysOf returns the key set of P after checking that its fields are
// exactly fields, in order: the constants a reader switches on (its field
// positions) then match the struct, and a field added to the struct
// without a case in the reader fails at init.
func keysOf[P any](fields ...string) keySet {
	t := reflect.TypeFor[P]()
	var names []string
	for i := range t.NumField() {
		names = append(names, t.Field(i).Name)
	}
	keys := Keys(t)
	if !slices.Equal(names, fields) || len(keys) != len(fields) {
		panic(fmt.Sprintf("server: the reader of %v switches on fields %v, the struct has %v with keys %v", t, fields, names, keys))
	}
	return keySet(keys)
}

// index returns the position of key k, or -1.
func (ks keySet) index(k string) int {
	for i, s := range ks {
		if s == k {
			return i
		}
	}
	return -1
}

// of returns the position of key k, or -1; it allocates nothing.
func (ks keySet) of(k []byte) int {
	for i, s := range ks {
		if s == string(k) {
			return i
		}
	}
	return -1
}

// The field positions of the params read by hand: a reader's switch cases,
// held to the struct by keysOf.
const (
	stepHandle = iota
	stepActions
	stepInfo
)

const (
	resetHandle = iota
	resetSeed
	resetOpts
	resetInfo
)

const (
	optStart = iota
	optSeat
)

const (
	runID = iota
	runPriors
	runValues
)

// The key sets of the params read by hand.
var (
	stepKeys     = keysOf[stepParams]("Handle", "Actions", "Info")
	resetKeys    = keysOf[resetParams]("Handle", "Seed", "Options", "Info")
	resetOptKeys = keysOf[resetOptsDoc]("Start", "Seat")
	runKeys      = keysOf[selfplayNextParams]("ID", "Priors", "Values")
	// selfplayNewKeys: rules, tier, seed, out, then az.Settings (checked
	// at init).
	selfplayNewKeys = Keys(reflect.TypeFor[selfplayNewParams]())
)

// The params below are read by hand (Method.Hand) and the results written
// by hand (appendMapHeader, appendStr, ...: step and reset allocate
// nothing; the others lay out bins in place): these structs only declare
// their keys, for the generated references and for the tests that hold the
// readers and writers to them.
type (
	// resetParams are reset's params.
	resetParams struct {
		Handle  uint64       `msgpack:"handle"`
		Seed    any          `msgpack:"seed"` // int, array of N ints, or nil
		Options resetOptsDoc `msgpack:"options"`
		Info    bool         `msgpack:"info"`
	}
	// resetOptsDoc is reset's options map.
	resetOptsDoc struct {
		Start *int `msgpack:"start"`
		Seat  int  `msgpack:"seat"`
	}
	// rowsResult are the rows of a handle's envs, after reset, step and load.
	rowsResult struct {
		Obs    []byte `msgpack:"obs"`
		Mask   []byte `msgpack:"mask"`
		ToMove []byte `msgpack:"to_move"`
	}
	// resetResult is reset's result (info only when recorded).
	resetResult struct {
		rowsResult
		Seeds []uint64 `msgpack:"seeds"`
		Info  []any    `msgpack:"info"`
	}
	// stepParams are step's params.
	stepParams struct {
		Handle  uint64 `msgpack:"handle"`
		Actions []byte `msgpack:"actions"` // bin of int32, or array of int
		Info    bool   `msgpack:"info"`
	}
	// stepResult is step's result (final_* only when an env autoreset,
	// info and final_info only when recorded).
	stepResult struct {
		rowsResult
		Reward      []byte `msgpack:"reward"`
		Terminated  []byte `msgpack:"terminated"`
		Truncated   []byte `msgpack:"truncated"`
		FinalObs    []byte `msgpack:"final_obs"`
		FinalMask   []byte `msgpack:"final_mask"`
		FinalToMove []byte `msgpack:"final_to_move"`
		Info        []any  `msgpack:"info"`
		FinalInfo   []any  `msgpack:"final_info"`
	}
	// loadResult is load's result.
	loadResult struct{ rowsResult }
	// renderResults are render's results, one form per format.
	renderResults struct {
		renderText
		renderSVG
		renderRGB
	}
	// observeResult is observe's result.
	observeResult struct {
		Obs  []byte `msgpack:"obs"`
		Mask []byte `msgpack:"mask"`
	}
	// selfplayNewParams are selfplay_new's params.
	selfplayNewParams struct {
		Rules          any     `msgpack:"rules"`
		Tier           string  `msgpack:"tier"`
		Sims           int     `msgpack:"sims"`
		C              float64 `msgpack:"c"`
		DirichletAlpha float64 `msgpack:"dirichlet_alpha"`
		DirichletFrac  float64 `msgpack:"dirichlet_frac"`
		TempMoves      int     `msgpack:"temperature_moves"`
		Gumbel         bool    `msgpack:"gumbel"`
		GumbelM        int     `msgpack:"gumbel_m"`
		FastSims       int     `msgpack:"fast_sims"`
		FullProb       float64 `msgpack:"full_prob"`
		Seed           uint64  `msgpack:"seed"`
		Games          int     `msgpack:"games"`
		InFlight       int     `msgpack:"games_in_flight"`
		MaxBatch       int     `msgpack:"max_batch"`
		EvalTimeout    float64 `msgpack:"eval_timeout"`
		Out            string  `msgpack:"out"`
		ShardGames     int     `msgpack:"shard_games"`
		FirstGame      int     `msgpack:"first_game"`
	}
	// selfplayNewResult is selfplay_new's result.
	selfplayNewResult struct {
		ID          uint64  `msgpack:"id"`
		ObsSize     int     `msgpack:"obs_size"`
		ObsLayout   int     `msgpack:"obs_layout"`
		Actions     int     `msgpack:"actions"`
		Tier        string  `msgpack:"tier"`
		Rules       string  `msgpack:"rules"`
		Games       int     `msgpack:"games"`
		FirstGame   int     `msgpack:"first_game"`
		GamesDone   int     `msgpack:"games_done"`
		InFlight    int     `msgpack:"games_in_flight"`
		MaxBatch    int     `msgpack:"max_batch"`
		EvalTimeout float64 `msgpack:"eval_timeout"`
		Out         string  `msgpack:"out"`
	}
	// runOnly are the params of a method that takes a self-play run id only.
	runOnly struct {
		ID uint64 `msgpack:"id"`
	}
	// selfplayNextParams are selfplay_next's params.
	selfplayNextParams struct {
		ID     uint64 `msgpack:"id"`
		Priors []byte `msgpack:"priors"`
		Values []byte `msgpack:"values"`
	}
	// selfplayNextResult is selfplay_next's result.
	selfplayNextResult struct {
		N         int    `msgpack:"n"`
		Obs       []byte `msgpack:"obs"`
		Mask      []byte `msgpack:"mask"`
		Done      bool   `msgpack:"done"`
		Games     int    `msgpack:"games"`
		Decisions int    `msgpack:"decisions"`
		Leaves    int64  `msgpack:"leaves"`
		Batches   int64  `msgpack:"batches"`
	}
	// statesResult is the result of initial and apply.
	statesResult struct {
		States []byte `msgpack:"states"`
	}
	// queryResult is query's result (mask, returns, obs when asked for).
	queryResult struct {
		Phase   []byte `msgpack:"phase"`
		ToMove  []byte `msgpack:"to_move"`
		Mask    []byte `msgpack:"mask"`
		Returns []byte `msgpack:"returns"`
		Obs     []byte `msgpack:"obs"`
	}
)

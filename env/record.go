package env

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// RecordFormat and RecordVersion identify a game record (docs/FORMATS.md).
const (
	RecordFormat  = "yutenv-record"
	RecordVersion = 1
)

// ErrWrongSeat: a recorded step was made by a seat other than the one to
// play (replay reports it apart from an illegal action: the seat is wrong,
// not the move).
var ErrWrongSeat = errors.New("wrong seat")

// Step is one entry of a record: a throw or an action, by the seat that made it.
type Step struct {
	Seat int `json:"seat"`
	// Throw is the thrown result's name ("back-do", "do", ..., "mo") for a throw, "" for an action.
	Throw string `json:"throw,omitempty"`
	// Action is the action id (0..179) for an action, nil for a throw.
	Action *int `json:"action,omitempty"`
}

// Result is the end of a recorded game (absent while the game is unfinished).
type Result struct {
	Winner    int   `json:"winner"`
	Places    []int `json:"places"`
	Decisions int   `json:"decisions"`
	Throws    int   `json:"throws"`
}

// Record is a whole game: rules, seed and every throw and action in order. It
// is written as one JSON object per line, so a file may hold many games.
// Replaying applies the recorded throws explicitly, so a record written by
// another program is checked against our rules whatever its dice.
type Record struct {
	Format  string   `json:"format"`
	Version int      `json:"version"`
	Rules   Rules    `json:"rules"`
	Seed    uint64   `json:"seed"`
	Start   int      `json:"start"` // the requested start seat, or -1 if drawn from the seed
	Steps   []Step   `json:"steps"`
	Result  *Result  `json:"result,omitempty"`
	Players []string `json:"players,omitempty"` // optional names of who played each seat
}

// NewRecord starts a record for a game created with New(rules, seed, start).
func NewRecord(rules Rules, seed uint64, start int) *Record {
	return &Record{Format: RecordFormat, Version: RecordVersion, Rules: rules, Seed: seed, Start: start}
}

// Add appends what ev did (a throw or an action) and, when ev ended the
// game, the result taken from s (the state after ev).
func (r *Record) Add(ev Event, s *State) {
	st := Step{Seat: int(ev.Seat)}
	if ev.Kind == EventThrow {
		st.Throw = ev.Throw.String()
	} else {
		a := int(ev.Action)
		st.Action = &a
	}
	r.Steps = append(r.Steps, st)
	if s.IsOver() {
		r.Result = resultOf(s)
	}
}

func resultOf(s *State) *Result {
	res := &Result{Winner: s.Winner(), Decisions: s.Decisions(), Throws: s.Throws()}
	for i := 0; i < s.rules.Players; i++ {
		res.Places = append(res.Places, s.Place(i))
	}
	return res
}

// ReplayError says which step of a record could not be replayed and why.
type ReplayError struct {
	Step int // index into Record.Steps
	Err  error
}

// Error names the step that failed and why.
func (e *ReplayError) Error() string { return fmt.Sprintf("record step %d: %v", e.Step, e.Err) }

// Unwrap returns the underlying error (ErrIllegalAction, ErrWrongPhase, ErrBadInput, ...).
func (e *ReplayError) Unwrap() error { return e.Err }

// Replay plays the record from its start and calls fn (if not nil) with the
// initial state (step -1, a zero Event) and after every step with the step
// index, its event and the state after it. It returns the final state. A step
// that does not fit (wrong seat, a throw at a decision, an illegal action) is
// reported as a *ReplayError naming its index; a recorded result that
// disagrees with the game is reported too.
func (r *Record) Replay(fn func(step int, ev Event, s *State) error) (State, error) {
	if r.Format != RecordFormat {
		return State{}, fmt.Errorf("%w: record format %q, want %q", ErrCorrupt, r.Format, RecordFormat)
	}
	if r.Version < 1 || r.Version > RecordVersion {
		return State{}, fmt.Errorf("%w: record version %d, this build reads 1..%d", ErrVersion, r.Version, RecordVersion)
	}
	s, err := New(r.Rules, r.Seed, r.Start)
	if err != nil {
		return State{}, fmt.Errorf("record: %w", err)
	}
	if fn != nil {
		if err := fn(-1, Event{}, &s); err != nil {
			return s, err
		}
	}
	for i, st := range r.Steps {
		ev, err := s.applyStep(st)
		if err != nil {
			return s, &ReplayError{Step: i, Err: err}
		}
		if fn != nil {
			if err := fn(i, ev, &s); err != nil {
				return s, err
			}
		}
	}
	if r.Result != nil {
		got := resultOf(&s)
		if !s.IsOver() {
			return s, fmt.Errorf("%w: record has a result but the game is not over after %d steps", ErrCorrupt, len(r.Steps))
		}
		if got.Winner != r.Result.Winner || fmt.Sprint(got.Places) != fmt.Sprint(r.Result.Places) {
			return s, fmt.Errorf("%w: record says winner %d places %v, the game gives winner %d places %v",
				ErrCorrupt, r.Result.Winner, r.Result.Places, got.Winner, got.Places)
		}
		if got.Decisions != r.Result.Decisions || got.Throws != r.Result.Throws {
			return s, fmt.Errorf("%w: record says %d decisions and %d throws, the game has %d and %d",
				ErrCorrupt, r.Result.Decisions, r.Result.Throws, got.Decisions, got.Throws)
		}
	}
	return s, nil
}

func (s *State) applyStep(st Step) (Event, error) {
	if st.Seat != int(s.seat) {
		what, verb := "an action", "move"
		if st.Throw != "" {
			what, verb = "a throw", "throw"
		}
		if s.IsOver() {
			return Event{}, fmt.Errorf("%w: %s by seat %d after the game ended", ErrWrongPhase, what, st.Seat)
		}
		return Event{}, fmt.Errorf("%w: %s by seat %d, but seat %d is to %s", ErrWrongSeat, what, st.Seat, s.seat, verb)
	}
	switch {
	case st.Throw != "" && st.Action != nil:
		return Event{}, fmt.Errorf("%w: a step has both a throw and an action", ErrBadInput)
	case st.Throw != "":
		t, err := ParseThrow(st.Throw)
		if err != nil {
			return Event{}, err
		}
		return s.ApplyThrow(t)
	case st.Action != nil:
		if *st.Action < 0 || *st.Action >= NumActions {
			return Event{}, fmt.Errorf("%w: action id %d out of range 0..%d", ErrIllegalAction, *st.Action, NumActions-1)
		}
		return s.Apply(Action(*st.Action))
	}
	return Event{}, fmt.Errorf("%w: a step has neither a throw nor an action", ErrBadInput)
}

// maxRecordLine bounds one record line (a game of a million steps fits).
const maxRecordLine = 64 << 20

// ReadRecords reads every record of a JSON-lines stream. A malformed line is
// reported with its line number, and reading stops there.
func ReadRecords(rd io.Reader) ([]*Record, error) {
	var out []*Record
	err := ScanRecords(rd, func(_, line int, rec *Record, err error) error {
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

// ScanRecords reads a JSON-lines stream of records and calls fn once per
// game (each non-blank line, numbered from 0) with its 1-based line number
// and either the parsed record or why the line is not one, so that one
// damaged game does not hide the verdict on the others. It stops when fn
// returns an error (and returns it) or at a line longer than the limit.
func ScanRecords(rd io.Reader, fn func(game, line int, rec *Record, err error) error) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), maxRecordLine)
	line, game := 0, 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		rec, err := ParseRecord(text)
		if err := fn(game, line, rec, err); err != nil {
			return err
		}
		game++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: line %d longer than %d bytes", ErrBadInput, line+1, maxRecordLine)
		}
		return err
	}
	return nil
}

// checkUniqueKeys walks the JSON value b and reports an object key that
// appears twice in one object. encoding/json keeps the last of repeated keys
// (and matches keys case-insensitively), so {"seed":1,"seed":2} would be
// read as seed 2 where another reader may take 1: a repeated key is
// ambiguous and refused. Keys are compared case-folded, as the decoder
// matches them.
func checkUniqueKeys(b []byte) error {
	type level struct {
		keys    map[string]struct{} // nil in an array
		wantKey bool
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var stack []level
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				fold := strings.ToLower(k)
				if _, dup := stack[n-1].keys[fold]; dup {
					return fmt.Errorf("key %q appears twice in one object", k)
				}
				stack[n-1].keys[fold] = struct{}{}
				stack[n-1].wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{keys: map[string]struct{}{}, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the object holding it wants its next key.
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].wantKey = true
		}
	}
}

// ParseRecord decodes one record from JSON and checks its header and rules.
func ParseRecord(b []byte) (*Record, error) {
	if err := checkUniqueKeys(b); err != nil {
		return nil, fmt.Errorf("%w: record: %v", ErrBadInput, err)
	}
	var r Record
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: record: %v", ErrBadInput, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: record: trailing data after the JSON object", ErrBadInput)
	}
	if r.Format != RecordFormat {
		return nil, fmt.Errorf("%w: record format %q, want %q", ErrBadInput, r.Format, RecordFormat)
	}
	if r.Version < 1 || r.Version > RecordVersion {
		return nil, fmt.Errorf("%w: record version %d, this build reads 1..%d", ErrVersion, r.Version, RecordVersion)
	}
	if err := r.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if len(r.Players) != 0 && len(r.Players) != r.Rules.Players {
		return nil, fmt.Errorf("%w: record: %d players named for %d seats", ErrBadInput, len(r.Players), r.Rules.Players)
	}
	if r.Result != nil && len(r.Result.Places) != r.Rules.Players {
		return nil, fmt.Errorf("%w: record: result has %d places for %d seats", ErrBadInput, len(r.Result.Places), r.Rules.Players)
	}
	return &r, nil
}

// WriteTo writes the record as one JSON line.
func (r *Record) WriteTo(w io.Writer) (int64, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	b = append(b, '\n')
	n, err := w.Write(b)
	return int64(n), err
}

package env

import (
	"fmt"
	"strconv"
	"strings"
)

// Obstacle is what landing on a station does: nothing (0), ObstacleSkip, or
// a push back by that many steps (1 to MaxPush).
type Obstacle int8

// ObstacleSkip: the seat whose stack stops on the station misses its next turn.
const ObstacleSkip Obstacle = -1

// Obstacles holds the obstacle of every station (index = station id). The
// zero value has none. Its text form, used in rules strings, JSON and
// msgpack, lists the stations in increasing order joined by '+':
// "4:skip+9:back2" (station 4 costs a turn, station 9 pushes back 2).
type Obstacles [NumStations]Obstacle

// IsZero reports whether there is no obstacle.
func (o Obstacles) IsZero() bool { return o == Obstacles{} }

// String returns the text form ("" when there is none).
func (o Obstacles) String() string {
	var parts []string
	for st, e := range o {
		switch {
		case e == ObstacleSkip:
			parts = append(parts, strconv.Itoa(st)+":skip")
		case e > 0:
			parts = append(parts, strconv.Itoa(st)+":back"+strconv.Itoa(int(e)))
		case e != 0:
			parts = append(parts, strconv.Itoa(st)+":"+strconv.Itoa(int(e)))
		}
	}
	return strings.Join(parts, "+")
}

// MarshalText encodes the text form.
func (o Obstacles) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads the text form: '+'-separated station:effect items,
// effect "skip" or "back<k>". It checks the syntax and that every station is
// named once; Rules.Validate checks the stations against the board.
func (o *Obstacles) UnmarshalText(b []byte) error {
	*o = Obstacles{}
	text := strings.TrimSpace(string(b))
	if text == "" || text == "none" {
		return nil
	}
	bad := func(item, why string) error {
		return fmt.Errorf("%w: obstacles: %q %s (want station:skip or station:back<k>, joined by '+', e.g. 4:skip+9:back2)", ErrInvalidRules, item, why)
	}
	for _, item := range strings.Split(text, "+") {
		item = strings.TrimSpace(item)
		ss, eff, ok := strings.Cut(item, ":")
		if !ok {
			return bad(item, "has no ':'")
		}
		st, err := strconv.Atoi(ss)
		if err != nil || st < 0 || st >= NumStations {
			return bad(item, fmt.Sprintf("names no station 0..%d", NumStations-1))
		}
		if o[st] != 0 {
			return bad(item, "names a station twice")
		}
		switch k, isBack := strings.CutPrefix(eff, "back"); {
		case eff == "skip":
			o[st] = ObstacleSkip
		case isBack:
			n, err := strconv.Atoi(k)
			if err != nil || n < 1 || n > MaxPush {
				return bad(item, fmt.Sprintf("pushes back by no number 1..%d", MaxPush))
			}
			o[st] = Obstacle(n)
		default:
			return bad(item, "has an unknown effect")
		}
	}
	return nil
}

// Stations returns the stations that hold an obstacle, in increasing order.
func (o Obstacles) Stations() []Station {
	var out []Station
	for st, e := range o {
		if e != 0 {
			out = append(out, Station(st))
		}
	}
	return out
}

package client

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/yutenv/yutenv/internal/msgp"
	"github.com/yutenv/yutenv/protocol"
)

// ErrProtocol is wrapped by every client error about a response that does
// not follow the protocol.
var ErrProtocol = errors.New("protocol error")

// Client is a minimal Go client of the protocol, used by the tests and the
// benchmarks and usable by Go programs. It is not safe for concurrent use.
// Call is generic (msgpack maps in and out); Step is the allocation-free
// fast path.
type Client struct {
	nc       net.Conn
	r        *bufio.Reader
	out      []byte
	in       []byte
	hdr      [protocol.HeaderSize]byte
	nextID   uint64
	maxFrame int
	step     StepResult
}

// Dial connects to "unix:/path" or "host:port" within timeout.
func Dial(addr string, timeout time.Duration) (*Client, error) {
	network := "tcp"
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, addr = "unix", path
	}
	nc, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return NewClient(nc), nil
}

// NewClient wraps an open connection.
func NewClient(nc net.Conn) *Client {
	return &Client{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), maxFrame: protocol.DefaultMaxFrame}
}

// Close closes the connection.
func (c *Client) Close() error { return c.nc.Close() }

// Conn returns the underlying connection.
func (c *Client) Conn() net.Conn { return c.nc }

// Do calls method m, sending p with its zero fields left out (the
// server's defaults apply), and decodes the result into an R. A server
// error comes back as *protocol.Error.
func Do[P, R any](c *Client, m protocol.Method[P, R], p *P) (*R, error) {
	raw, err := c.call(m.Name, p)
	if err != nil {
		return nil, err
	}
	var r R
	if err := msgpack.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: result: %v", ErrProtocol, err)
	}
	return &r, nil
}

// Hello performs the handshake with an optional token and returns its result.
func (c *Client) Hello(token string) (map[string]any, error) {
	v := int64(protocol.Version)
	p := &protocol.HelloParams{Protocol: &v, Client: "yutenv-go"}
	if token != "" {
		p.Token = &token
	}
	raw, err := c.call(protocol.Hello.Name, p)
	if err != nil {
		return nil, err
	}
	var res map[string]any
	if err := msgpack.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	if lim, ok := res["limits"].(map[string]any); ok {
		if mf, ok := Int(lim["max_frame"]); ok && mf > 0 {
			c.maxFrame = mf
		}
	}
	return res, nil
}

// Int converts an integer of a decoded result (Call) to int.
func Int(v any) (int, bool) {
	switch x := v.(type) {
	case int8:
		return int(x), true
	case int16:
		return int(x), true
	case int32:
		return int(x), true
	case int64:
		return int(x), true
	case uint8:
		return int(x), true
	case uint16:
		return int(x), true
	case uint32:
		return int(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int(x), true
		}
	case int:
		return x, true
	}
	return 0, false
}

// Call sends one request and returns its result decoded as a map. A server
// error comes back as *Error. Do is the typed form.
func (c *Client) Call(method string, params map[string]any) (map[string]any, error) {
	var p any
	if params != nil {
		p = params
	}
	raw, err := c.call(method, p)
	if err != nil {
		return nil, err
	}
	var res map[string]any
	if err := msgpack.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%w: result: %v", ErrProtocol, err)
	}
	return res, nil
}

// call sends one request (params nil: none; a struct's zero fields are
// left out) and returns its raw result.
func (c *Client) call(method string, params any) (msgpack.RawMessage, error) {
	c.nextID++
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetOmitEmpty(true)
	req := struct {
		ID     uint64 `msgpack:"id"`
		Method string `msgpack:"method"`
		Params any    `msgpack:"params,omitempty"`
	}{c.nextID, method, params}
	if err := enc.Encode(&req); err != nil {
		return nil, err
	}
	if err := c.WriteFrame(buf.Bytes()); err != nil {
		return nil, err
	}
	resp, err := c.ReadFrame()
	if err != nil {
		return nil, err
	}
	return c.DecodeResponse(resp)
}

// DecodeResponse checks a response body (ReadFrame's) to the client's last
// request and returns its raw result, or the *protocol.Error it carries.
func (c *Client) DecodeResponse(body []byte) (msgpack.RawMessage, error) {
	if err := msgp.CheckMap(body); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	var resp struct {
		ID     any                `msgpack:"id"`
		Result msgpack.RawMessage `msgpack:"result"`
		Error  *struct {
			Code    string `msgpack:"code"`
			Message string `msgpack:"message"`
		} `msgpack:"error"`
	}
	if err := msgpack.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	if resp.Error != nil {
		return nil, &protocol.Error{Code: protocol.Code(resp.Error.Code), Message: resp.Error.Message}
	}
	if id, ok := Int(resp.ID); !ok || uint64(id) != c.nextID {
		return nil, fmt.Errorf("%w: response id %v, want %d", ErrProtocol, resp.ID, c.nextID)
	}
	return resp.Result, nil
}

// WriteFrame sends one frame with the given body.
func (c *Client) WriteFrame(body []byte) error {
	c.out = protocol.AppendFrame(c.out[:0], body)
	_, err := c.nc.Write(c.out)
	return err
}

// ReadFrame reads one frame and returns its body, valid until the next read.
func (c *Client) ReadFrame() ([]byte, error) {
	n, err := protocol.ReadHeader(c.r, &c.hdr)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > c.maxFrame {
		return nil, fmt.Errorf("%w: frame of %d bytes (max %d)", ErrProtocol, n, c.maxFrame)
	}
	if cap(c.in) < n {
		c.in = make([]byte, n)
	}
	c.in = c.in[:n]
	if _, err := io.ReadFull(c.r, c.in); err != nil {
		return nil, protocol.Unexpected(err)
	}
	return c.in, nil
}

// StepResult holds the arrays of a step result as raw little-endian bytes,
// as they came off the wire (see docs/PROTOCOL.md, Arrays). The slices are
// valid until the client's next call.
// Its tags are keys of step's declared result (the parser reads the keys
// by them; an init check holds them to the declaration).
type StepResult struct {
	Obs         []byte `msgpack:"obs"`
	Mask        []byte `msgpack:"mask"`
	Reward      []byte `msgpack:"reward"`
	Terminated  []byte `msgpack:"terminated"`
	Truncated   []byte `msgpack:"truncated"`
	ToMove      []byte `msgpack:"to_move"`
	FinalObs    []byte `msgpack:"final_obs"`
	FinalMask   []byte `msgpack:"final_mask"`
	FinalToMove []byte `msgpack:"final_to_move"`
	// Opponent and Pending: a handle made with an opponent mixture only,
	// each env's opponent entry and whether its row waits for a
	// client-played opponent (answered with protocol.OpponentStep).
	Opponent []byte `msgpack:"opponent"`
	Pending  []byte `msgpack:"pending"`
	// Info is the raw msgpack of the info list, or nil.
	Info []byte `msgpack:"info"`
	// Seq is the raw msgpack of the request a shared step served (a step
	// with params.shared; its rows are then in the region), or nil.
	Seq []byte `msgpack:"seq"`
	// Size is the number of bytes of the response frame.
	Size int `msgpack:"-"`
}

// stepResultKeys are step's declared result keys; stepResultField[k] is
// the StepResult field of key k (-1: not kept), stepResultRaw[k] whether
// it keeps the raw value (a list) rather than a bin.
var (
	stepResultKeys                 = protocol.KeySet(protocol.Keys(reflect.TypeFor[protocol.StepResult]()))
	stepResultField, stepResultRaw = stepResultFields(reflect.TypeFor[protocol.StepResult](), reflect.TypeFor[StepResult]())
)

// stepResultFields maps the keys of the declared result decl to the
// fields of the client's struct client with the same tags; it panics when
// client has a tag decl lacks.
func stepResultFields(decl, client reflect.Type) (field []int, raw []bool) {
	keys := protocol.Keys(decl)
	field, raw = make([]int, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		field[i] = -1
		raw[i] = keyType(decl, k) != reflect.TypeFor[[]byte]()
	}
	for j := range client.NumField() {
		tag, _, _ := strings.Cut(client.Field(j).Tag.Get("msgpack"), ",")
		if tag == "-" {
			continue
		}
		i := slices.Index(keys, tag)
		if i < 0 {
			panic(fmt.Sprintf("client: %v.%s reads key %q, which %v does not declare", client, client.Field(j).Name, tag, decl))
		}
		field[i] = j
	}
	return field, raw
}

// ObsF32 returns Obs as float32 values (a view on little-endian machines, a copy otherwise).
func (r *StepResult) ObsF32() []float32 { return f32(r.Obs) }

// RewardF32 returns Reward as float32 values.
func (r *StepResult) RewardF32() []float32 { return f32(r.Reward) }

func f32(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	if msgp.LittleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// Step sends a step of the given handle with actions as an int32 bin and
// parses the result without allocating (after the first calls). info asks
// for the info list (-1: the handle's default, 0: no, 1: yes).
func (c *Client) Step(handle uint64, actions []int32, info int) (*StepResult, error) {
	if err := c.SendStep(handle, actions, info); err != nil {
		return nil, err
	}
	return c.RecvStep()
}

// SendStep writes a step request without waiting for its response
// (pipelining); RecvStep reads it.
func (c *Client) SendStep(handle uint64, actions []int32, info int) error {
	c.nextID++
	b := protocol.BeginFrame(c.out[:0])
	b = msgp.AppendMapHeader(b, 3)
	b = msgp.AppendStr(b, "id")
	b = msgp.AppendUint(b, c.nextID)
	b = msgp.AppendStr(b, "method")
	b = msgp.AppendStr(b, protocol.Step.Name)
	b = msgp.AppendStr(b, "params")
	keys := 2
	if info >= 0 {
		keys++
	}
	b = msgp.AppendMapHeader(b, keys)
	b = msgp.AppendStr(b, protocol.StepKeys[protocol.StepHandle])
	b = msgp.AppendUint(b, handle)
	b = msgp.AppendStr(b, protocol.StepKeys[protocol.StepActions])
	b = msgp.AppendBinHeader(b, 4*len(actions))
	for _, a := range actions {
		b = binary.LittleEndian.AppendUint32(b, uint32(a))
	}
	if info >= 0 {
		b = msgp.AppendStr(b, protocol.StepKeys[protocol.StepInfo])
		b = msgp.AppendBool(b, info == 1)
	}
	protocol.EndFrame(b, 0)
	c.out = b
	_, err := c.nc.Write(b)
	return err
}

// RecvStep reads a step response.
func (c *Client) RecvStep() (*StepResult, error) {
	body, err := c.ReadFrame()
	if err != nil {
		return nil, err
	}
	return c.ParseStep(body)
}

// ParseStep parses the body of a step response without allocating; the
// result is valid until the client's next call.
func (c *Client) ParseStep(body []byte) (*StepResult, error) {
	res := &c.step
	*res = StepResult{Size: len(body) + 4}
	r := msgp.NewReader(body)
	n, err := r.MapLen()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	for range n {
		k, err := r.Str()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
		}
		switch string(k) {
		case "id":
			if _, err := r.Skip(); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
			}
		case "error":
			m, err := c.DecodeResponse(body)
			if err == nil {
				err = fmt.Errorf("%w: error response without error: %v", ErrProtocol, m)
			}
			return nil, err
		case "result":
			if err := res.parse(&r); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: unknown response key %q", ErrProtocol, k)
		}
	}
	return res, nil
}

// keyType returns the type of the field of struct t (embedded structs
// inlined) tagged key, or nil.
func keyType(t reflect.Type, key string) reflect.Type {
	for i := range t.NumField() {
		sf := t.Field(i)
		if name, _, _ := strings.Cut(sf.Tag.Get("msgpack"), ","); name == key {
			return sf.Type
		}
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			if ft := keyType(sf.Type, key); ft != nil {
				return ft
			}
		}
	}
	return nil
}

// stepField returns the field of res that keeps key i of stepResultKeys.
func stepField(res *StepResult, i int) *[]byte {
	return reflect.ValueOf(res).Elem().Field(stepResultField[i]).Addr().Interface().(*[]byte)
}

// parse reads a step result map.
func (res *StepResult) parse(r *msgp.Reader) error {
	n, err := r.MapLen()
	if err != nil {
		return fmt.Errorf("%w: result: %v", ErrProtocol, err)
	}
	for range n {
		k, err := r.Str()
		if err != nil {
			return fmt.Errorf("%w: result: %v", ErrProtocol, err)
		}
		i := stepResultKeys.Of(k)
		if i < 0 || stepResultField[i] < 0 || stepResultRaw[i] {
			v, err := r.Skip()
			if err != nil {
				return fmt.Errorf("%w: result: %v", ErrProtocol, err)
			}
			if i >= 0 && stepResultField[i] >= 0 {
				*stepField(res, i) = v
			}
			continue
		}
		if *stepField(res, i), err = r.Bin(); err != nil {
			return fmt.Errorf("%w: result.%s: %v", ErrProtocol, k, err)
		}
	}
	return nil
}

package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/yutenv/yutenv/client"
	"github.com/yutenv/yutenv/server"
)

// Example serves envs on a Unix socket and plays a batch of four envs
// against random opponents with a Go client, always taking the first legal
// action.
func Example() {
	dir, _ := os.MkdirTemp("", "yutex")
	defer os.RemoveAll(dir)
	srv, err := server.New(server.Config{})
	if err != nil {
		panic(err)
	}
	l, addr, err := server.Listen("unix:" + filepath.Join(dir, "s.sock"))
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())

	c, err := client.Dial(addr, time.Second)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Hello(""); err != nil {
		panic(err)
	}
	res, _ := c.Call("make", map[string]any{"n": 4, "tier": "compact", "opponent": "random"})
	fmt.Println("tier:", res["tier"], "autoreset:", res["autoreset"])
	first, _ := c.Call("reset", map[string]any{"handle": 1, "seed": 42})
	d := fmt.Sprint(len(first["obs"].([]byte)) / 4 / 4) // 4 envs of float32
	fmt.Println("obs rows match obs_size:", d == fmt.Sprint(res["obs_size"]))
	mask := first["mask"].([]byte)
	actions := make([]int32, 4)
	ended := 0
	for range 200 {
		for i := range actions {
			actions[i] = int32(bytes.IndexByte(mask[i*180:(i+1)*180], 1))
			actions[i] = max(actions[i], 0) // an ended env ignores its action
		}
		r, err := c.Step(1, actions, -1)
		if err != nil {
			panic(err)
		}
		ended += bytes.Count(r.Terminated, []byte{1})
		mask = r.Mask
	}
	fmt.Println("episodes ended:", ended > 0)
	// Output:
	// tier: compact autoreset: next_step
	// obs rows match obs_size: true
	// episodes ended: true
}

// Package headless loads a page in headless Chromium over the DevTools
// protocol (on a pipe: --remote-debugging-pipe, so no port and no websocket
// library) and reports what a person would see: console errors, exceptions
// and failed loads, the result of a script, and a full-page screenshot.
// Tests use it to check the HTML report in a real browser.
package headless

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Find returns the path of a Chromium binary, or "" when none is installed.
func Find() string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Result is what loading a page showed.
type Result struct {
	Errors     []string        // console errors, uncaught exceptions, failed loads
	Eval       json.RawMessage // the value of the script, JSON-encoded
	Screenshot []byte          // PNG of the whole page
}

type browser struct {
	cmd    *exec.Cmd
	in     *os.File // our end of Chromium's fd 3 (commands)
	out    *bufio.Reader
	outF   *os.File
	nextID int
	events []message
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Load opens url (a file:// URL) in a fresh headless Chromium with the given
// viewport width, waits for the load event, evaluates script and takes a
// full-page screenshot. userDataDir must be an empty temporary directory.
func Load(ctx context.Context, chromium, url, script string, width int, userDataDir string) (*Result, error) {
	// fd 3: Chromium reads commands; fd 4: it writes replies and events.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+userDataDir, "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, evW}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", chromium, err)
	}
	cmdR.Close()
	evW.Close()
	b := &browser{cmd: cmd, in: cmdW, out: bufio.NewReaderSize(evR, 1<<20), outF: evR}
	defer b.shutdown()
	res, err := b.run(url, script, width)
	if err != nil {
		return nil, fmt.Errorf("%w (chromium stderr: %s)", err, lastLines(stderr.String(), 5))
	}
	return res, nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}

func (b *browser) shutdown() {
	b.send("", "Browser.close", nil)
	b.in.Close()
	done := make(chan struct{})
	go func() { b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		b.cmd.Process.Kill()
		<-done
	}
	b.outF.Close()
}

func (b *browser) send(session, method string, params any) (int, error) {
	b.nextID++
	m := map[string]any{"id": b.nextID, "method": method}
	if params != nil {
		m["params"] = params
	}
	if session != "" {
		m["sessionId"] = session
	}
	j, err := json.Marshal(m)
	if err != nil {
		return 0, err
	}
	_, err = b.in.Write(append(j, 0))
	return b.nextID, err
}

func (b *browser) read() (message, error) {
	raw, err := b.out.ReadBytes(0)
	if err != nil {
		return message{}, fmt.Errorf("reading from chromium: %w", err)
	}
	var m message
	if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
		return message{}, fmt.Errorf("bad DevTools message: %w", err)
	}
	return m, nil
}

// call sends a command and waits for its reply, keeping events that arrive
// meanwhile.
func (b *browser) call(session, method string, params any) (json.RawMessage, error) {
	id, err := b.send(session, method, params)
	if err != nil {
		return nil, err
	}
	for {
		m, err := b.read()
		if err != nil {
			return nil, err
		}
		if m.ID == id {
			if m.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
			}
			return m.Result, nil
		}
		if m.Method != "" {
			b.events = append(b.events, m)
		}
	}
}

// waitEvent reads until the named event arrives.
func (b *browser) waitEvent(method string) error {
	for _, e := range b.events {
		if e.Method == method {
			return nil
		}
	}
	for {
		m, err := b.read()
		if err != nil {
			return err
		}
		if m.Method != "" {
			b.events = append(b.events, m)
		}
		if m.Method == method {
			return nil
		}
	}
}

func (b *browser) run(url, script string, width int) (*Result, error) {
	r, err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return nil, err
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(r, &target); err != nil {
		return nil, err
	}
	r, err = b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		return nil, err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(r, &att); err != nil {
		return nil, err
	}
	s := att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if _, err := b.call(s, m, nil); err != nil {
			return nil, err
		}
	}
	if _, err := b.call(s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": false}); err != nil {
		return nil, err
	}
	b.events = nil
	if _, err := b.call(s, "Page.navigate", map[string]any{"url": url}); err != nil {
		return nil, err
	}
	if err := b.waitEvent("Page.loadEventFired"); err != nil {
		return nil, err
	}
	res := &Result{}
	r, err = b.call(s, "Runtime.evaluate", map[string]any{"expression": script, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	var ev struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(r, &ev); err != nil {
		return nil, err
	}
	if ev.ExceptionDetails != nil {
		return nil, fmt.Errorf("script failed: %s", ev.ExceptionDetails.Text)
	}
	res.Eval = ev.Result.Value
	r, err = b.call(s, "Page.getLayoutMetrics", nil)
	if err != nil {
		return nil, err
	}
	var lm struct {
		CSSContentSize struct {
			Width, Height float64
		} `json:"cssContentSize"`
	}
	if err := json.Unmarshal(r, &lm); err != nil {
		return nil, err
	}
	r, err = b.call(s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": float64(width), "height": lm.CSSContentSize.Height, "scale": 1}})
	if err != nil {
		return nil, err
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(r, &shot); err != nil {
		return nil, err
	}
	if res.Screenshot, err = base64.StdEncoding.DecodeString(shot.Data); err != nil {
		return nil, err
	}
	res.Errors = collectErrors(b.events)
	return res, nil
}

// collectErrors picks what a person would call an error out of the events:
// console.error/assert, uncaught exceptions, error log entries (failed
// loads, blocked requests, CSP violations).
func collectErrors(events []message) []string {
	var out []string
	for _, e := range events {
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			if json.Unmarshal(e.Params, &p) == nil && (p.Type == "error" || p.Type == "assert") {
				var parts []string
				for _, a := range p.Args {
					parts = append(parts, fmt.Sprint(a.Value, a.Description))
				}
				out = append(out, "console."+p.Type+": "+strings.Join(parts, " "))
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level, Text, URL string
				} `json:"entry"`
			}
			if json.Unmarshal(e.Params, &p) == nil && p.Entry.Level == "error" {
				out = append(out, "log: "+p.Entry.Text+" "+p.Entry.URL)
			}
		}
	}
	return out
}

// Command chatclient is Go's net/http as a real client of the router: one http.Client (keep-alive,
// as Go programs use it) posting OpenAI chat requests. Standard library only, so it builds offline.
//
// Two modes, matching the Python script clients of the tests and of bench/routing-eval.sh:
//
//	chatclient
//	    BASE_URL (e.g. http://10.0.0.1:8080/v1) and PROMPTS (a file holding a JSON array of prompt
//	    strings) from the environment; posts each prompt as a chat request and prints
//	    "<X-NX-Route-Source> <X-NX-Tier>" per prompt, in order (RealClientVerdictsTest).
//	chatclient -requests BASE
//	    reads one request per stdin line, {"path": "/v1/chat/completions", "body": "<JSON text>"},
//	    posts the body as it stands to BASE+path and writes {"status": N, "headers": {...}} per line
//	    (bench/routing-eval.sh --client go, through ScriptClient).
//
// A transport error ends the program with a message on stderr and exit status 1: the callers count
// the missing lines, so a request is never silently dropped.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is the body a Go program builds with encoding/json: json.Marshal, as the Go SDKs use
// it (HTML-sensitive characters written as \u003c, \u003e, \u0026).
type chatRequest struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Messages  []message `json:"messages"`
}

type evalRequest struct {
	Path string `json:"path"`
	Body string `json:"body"`
}

type evalAnswer struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

func main() {
	requests := flag.String("requests", "", "base URL: read {path, body} lines from stdin, write {status, headers} lines")
	flag.Parse()
	// The default transport keeps connections alive; one client for the whole run, as a Go service holds it.
	client := &http.Client{Timeout: 60 * time.Second}
	var err error
	if *requests != "" {
		err = serveRequests(client, strings.TrimRight(*requests, "/"), os.Stdin, os.Stdout)
	} else {
		err = sendPrompts(client, os.Getenv("BASE_URL"), os.Getenv("PROMPTS"), os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatclient:", err)
		os.Exit(1)
	}
}

// sendPrompts posts every prompt of the JSON array in promptsFile and prints each answer's verdict headers.
func sendPrompts(client *http.Client, baseURL, promptsFile string, out io.Writer) error {
	if baseURL == "" || promptsFile == "" {
		return fmt.Errorf("BASE_URL and PROMPTS must be set (or use -requests BASE)")
	}
	raw, err := os.ReadFile(promptsFile)
	if err != nil {
		return fmt.Errorf("read PROMPTS: %w", err)
	}
	var prompts []string
	if err := json.Unmarshal(raw, &prompts); err != nil {
		return fmt.Errorf("PROMPTS %s is not a JSON array of strings: %w", promptsFile, err)
	}
	for i, prompt := range prompts {
		body, err := json.Marshal(chatRequest{Model: "nexus", MaxTokens: 16,
			Messages: []message{{Role: "user", Content: prompt}}})
		if err != nil {
			return fmt.Errorf("prompt %d: encode: %w", i, err)
		}
		status, header, err := post(client, baseURL+"/chat/completions", body)
		if err != nil {
			return fmt.Errorf("prompt %d: %w", i, err)
		}
		if status != http.StatusOK {
			return fmt.Errorf("prompt %d: HTTP %d", i, status)
		}
		fmt.Fprintln(out, header.Get("X-NX-Route-Source"), header.Get("X-NX-Tier"))
	}
	return nil
}

// serveRequests answers routing-eval's request lines until stdin closes.
func serveRequests(client *http.Client, base string, in io.Reader, out io.Writer) error {
	lines := bufio.NewScanner(in)
	// A request line holds a whole chat body: long passages and multi-turn histories run to hundreds of KB.
	lines.Buffer(make([]byte, 64*1024), 64*1024*1024)
	encoder := json.NewEncoder(out)
	for lines.Scan() {
		var request evalRequest
		if err := json.Unmarshal(lines.Bytes(), &request); err != nil {
			return fmt.Errorf("request line: %w", err)
		}
		status, header, err := post(client, base+request.Path, []byte(request.Body))
		if err != nil {
			return err
		}
		answer := evalAnswer{Status: status, Headers: map[string]string{}}
		for name, values := range header {
			answer.Headers[strings.ToLower(name)] = values[0]
		}
		// Encode writes the line and its newline in one call; stdout is unbuffered, so it reaches the reader now.
		if err := encoder.Encode(answer); err != nil {
			return fmt.Errorf("write answer: %w", err)
		}
	}
	return lines.Err()
}

// post sends body as a JSON POST and reads the answer to its end, so the connection goes back to the pool.
func post(client *http.Client, url string, body []byte) (int, http.Header, error) {
	request, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("POST %s: %w", url, err)
	}
	request.Header.Set("Content-Type", "application/json")
	answer, err := client.Do(request)
	if err != nil {
		return 0, nil, fmt.Errorf("POST %s: %w", url, err)
	}
	defer answer.Body.Close()
	if _, err := io.Copy(io.Discard, answer.Body); err != nil {
		return 0, nil, fmt.Errorf("POST %s: read answer: %w", url, err)
	}
	return answer.StatusCode, answer.Header, nil
}

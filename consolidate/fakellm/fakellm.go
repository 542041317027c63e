// Package fakellm is a scripted OpenAI-compatible chat completions server
// for tests (httptest), with a deterministic /v1/embeddings. Each request plays the next step of the script:
// a status code, a delay (to provoke timeouts), a fixed answer, a raw
// (e.g. truncated) body, or an "auto" answer computed from the items in the
// prompt: well-behaved (add, compress), an oracle that answers from gold
// labels (oracle), or hostile (archive-all, copy-secret, invent-id,
// invent-fact, garbage, truncated).
package fakellm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Step is one scripted reply.
type Step struct {
	Status  int             `json:"status,omitempty"`  // HTTP status; default 200
	Delay   string          `json:"delay,omitempty"`   // wait before answering ("3s"); the client may time out
	Content string          `json:"content,omitempty"` // assistant message text, verbatim
	Ops     json.RawMessage `json:"ops,omitempty"`     // shorthand: content {"operations": ops}
	Raw     string          `json:"raw,omitempty"`     // whole HTTP body, verbatim (e.g. truncated JSON)
	Auto    string          `json:"auto,omitempty"`    // computed answer; see Answer
	Repeat  bool            `json:"repeat,omitempty"`  // play this step for every further request
	// Gold labels the auto mode "oracle" answers from.
	Gold []Gold `json:"gold,omitempty"`
}

// Gold is the true relation of one candidate to a stored text, by text.
type Gold struct {
	Candidate string `json:"candidate"` // the candidate's text
	Kind      string `json:"kind"`      // update, duplicate, compatible or new
	Target    string `json:"target"`    // the text of the entry it updates, duplicates or complements
}

// Item is one numbered item of a memctl prompt.
type Item struct {
	ID       int      `json:"id"`
	Kind     string   `json:"kind"`
	Category string   `json:"cat"`
	Text     string   `json:"text"`
	Scope    []string `json:"scope,omitempty"`
}

// Request is what the server received.
type Request struct {
	Model          string
	System, User   string
	ResponseFormat string
	SchemaName     string // the json_schema name, when the request has one
	Items          []Item
}

// Server is the fake endpoint. URL + "/v1" is the base URL to configure.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	steps    []Step
	next     int
	requests []Request
	// embeddings (/v1/embeddings): the texts embedded, and the concept
	// each word stands for (see SetConcepts).
	embedded []string
	concepts map[string]string
	fault    string // see SetEmbeddingFault
	delay    func(Request) time.Duration
}

// New starts a server playing steps. With no step left it answers 500
// "script exhausted", so an unexpected call is visible.
func New(steps []Step) *Server {
	s := &Server{steps: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Load reads a script: a JSON array of steps, or one step per line (JSON
// Lines; blank lines and lines starting with # are skipped).
func Load(path string) ([]Step, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse parses a script (see Load).
func Parse(b []byte) ([]Step, error) {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '[' {
		var steps []Step
		if err := json.Unmarshal(t, &steps); err != nil {
			return nil, fmt.Errorf("fakellm script: %w", err)
		}
		return steps, nil
	}
	var steps []Step
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var st Step
		if err := json.Unmarshal([]byte(line), &st); err != nil {
			return nil, fmt.Errorf("fakellm script line %d: %w", n, err)
		}
		steps = append(steps, st)
	}
	return steps, sc.Err()
}

// Play replaces the rest of the script: the next request plays steps[0].
// Tests that change the server's behaviour between runs (a simulation)
// use it instead of starting a new server.
func (s *Server) Play(steps []Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append([]Step(nil), steps...)
	s.next = 0
}

// Calls returns how many requests arrived.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

type chatReq struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// ParseItems extracts the numbered items from a memctl user prompt.
func ParseItems(user string) []Item {
	var out []Item
	for _, l := range strings.Split(user, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var it Item
		if json.Unmarshal([]byte(l), &it) == nil && it.ID > 0 {
			out = append(out, it)
		}
	}
	return out
}

// SetDelay makes every chat completion wait delay(request) before it
// answers, after its step's own delay; nil waits no more. Tests use it to
// make answers arrive in another order than the requests were sent.
func (s *Server) SetDelay(delay func(Request) time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = delay
}

// SetConcepts makes the embeddings treat each word of m as its concept
// (m["whites"] = "coffee"): texts that share a concept but no word get
// similar vectors, as a real embedding model gives synonyms.
func (s *Server) SetConcepts(m map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.concepts = m
}

// EmbeddingFaults are the ways /v1/embeddings can misbehave (see
// SetEmbeddingFault): "error" answers 500, "empty" an empty data list,
// "zero" all-zero vectors, "short" vectors of 3 numbers (other texts' have EmbeddingDims), "nan" vectors
// holding NaN (not valid JSON), "slow" after 10 s (or when the client
// gives up).
var EmbeddingFaults = []string{"error", "empty", "zero", "short", "nan", "slow"}

// SetEmbeddingFault makes /v1/embeddings misbehave from now on as fault
// names (one of EmbeddingFaults); "" restores deterministic vectors.
func (s *Server) SetEmbeddingFault(fault string) error {
	if fault != "" && !slices.Contains(EmbeddingFaults, fault) {
		return fmt.Errorf("unknown embedding fault %q (known: %s)", fault, strings.Join(EmbeddingFaults, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = fault
	return nil
}

// Embedded returns the texts /v1/embeddings was asked for, in order.
func (s *Server) Embedded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.embedded...)
}

// EmbeddingDims is the length of the fake's vectors.
const EmbeddingDims = 256

// Vector is the fake embedding of text: a bag of its lower-case words
// (each replaced by its concept), hashed into EmbeddingDims dimensions.
// Deterministic.
func Vector(text string, concepts map[string]string) []float32 {
	v := make([]float32, EmbeddingDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if c, ok := concepts[w]; ok {
			w = c
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%EmbeddingDims]++
	}
	return v
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	var er struct {
		Input any    `json:"input"`
		Model string `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&er); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var texts []string
	switch in := er.Input.(type) {
	case string:
		texts = []string{in}
	case []any:
		for _, x := range in {
			t, _ := x.(string)
			texts = append(texts, t)
		}
	}
	s.mu.Lock()
	s.embedded = append(s.embedded, texts...)
	concepts, fault := s.concepts, s.fault
	s.mu.Unlock()
	switch fault {
	case "error":
		http.Error(w, `{"error":{"message":"embedding model overloaded","type":"server_error"}}`, http.StatusInternalServerError)
		return
	case "nan":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[NaN,1]}],"model":"m"}`)
		return
	case "slow":
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Second):
		}
	}
	data := []any{}
	for i, t := range texts {
		v := Vector(t, concepts)
		switch fault {
		case "empty":
			continue
		case "zero":
			v = make([]float32, EmbeddingDims)
		case "short":
			v = []float32{1, 0.5, 0.25}
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": er.Model,
		"usage": map[string]any{"prompt_tokens": 0, "total_tokens": 0}})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/embeddings") {
		s.handleEmbeddings(w, r)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var cr chatReq
	if err := json.NewDecoder(r.Body).Decode(&cr); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req := Request{Model: cr.Model}
	for _, m := range cr.Messages {
		switch m.Role {
		case "system":
			req.System = m.Content
		case "user":
			req.User = m.Content
		}
	}
	if cr.ResponseFormat != nil {
		req.ResponseFormat = cr.ResponseFormat.Type
		if cr.ResponseFormat.JSONSchema != nil {
			req.SchemaName = cr.ResponseFormat.JSONSchema.Name
		}
	}
	req.Items = ParseItems(req.User)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var st Step
	ok := s.next < len(s.steps)
	if ok {
		st = s.steps[s.next]
		if !st.Repeat {
			s.next++
		}
	}
	delay := s.delay
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusInternalServerError, "fakellm: script exhausted")
		return
	}
	d, _ := time.ParseDuration(st.Delay)
	if delay != nil {
		d += delay(req)
	}
	if d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	if st.Status != 0 && st.Status != http.StatusOK {
		writeError(w, st.Status, fmt.Sprintf("fakellm: scripted status %d", st.Status))
		return
	}
	if st.Raw != "" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(st.Raw))
		return
	}
	content := st.Content
	switch {
	case st.Ops != nil:
		content = `{"operations": ` + string(st.Ops) + `}`
	case st.Auto == "extract":
		content = ExtractAnswer(req.SchemaName, req.User)
	case st.Auto == "extract-credulous":
		content = CredulousExtractAnswer(req.SchemaName, req.User)
	case st.Auto == "oracle":
		content = Oracle(st.Gold, req.Items)
	case st.Auto != "":
		content = Answer(st.Auto, req.Items)
	}
	body := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": cr.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": (len(req.System) + len(req.User) + 3) / 4, "completion_tokens": (len(content) + 3) / 4,
			"total_tokens": (len(req.System)+len(req.User)+3)/4 + (len(content)+3)/4},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}})
	_, _ = w.Write(b)
}

type op struct {
	Op       string `json:"op"`
	Target   int    `json:"target"`
	Sources  []int  `json:"sources"`
	Text     string `json:"text"`
	Category string `json:"category"`
	Reason   string `json:"reason"`
}

// FakeSecret is the key copy-secret answers leak.
const FakeSecret = "sk-fakellmLEAKED0123456789abcdef"

// Answer computes an answer for the items of a prompt:
//
//	add          every candidate becomes an entry (well-behaved)
//	compress     all candidates become one entry with the first one's text
//	archive-all  adds every candidate and archives every entry (hostile)
//	archive-first  adds every candidate and archives the first entry, for
//	             a reason naming the first candidate: of two requests
//	             showing the same entry, the answer applied first wins
//	copy-secret  adds every candidate with an API key appended (hostile)
//	invent-id    merges every candidate into entry 999 (hostile)
//	invent-fact  adds every candidate with a made-up date (hostile)
//	merge-unrelated  merges each candidate into the first entry, rewriting
//	             it with the candidate's text (hostile: an unrelated fact)
//	huge         the add answer padded past 1 MiB (hostile)
//	garbage      prose, no JSON
//	truncated    a valid answer cut in half
func Answer(mode string, items []Item) string {
	var ops []op
	var cands, entries []Item
	for _, it := range items {
		if it.Kind == "candidate" {
			cands = append(cands, it)
		} else {
			entries = append(entries, it)
		}
	}
	addAll := func(suffix string) {
		for _, c := range cands {
			text := ""
			if suffix != "" {
				text = c.Text + suffix
			}
			ops = append(ops, op{Op: "add", Sources: []int{c.ID}, Text: text, Reason: "new"})
		}
	}
	switch mode {
	case "add", "truncated":
		addAll("")
	case "compress":
		if len(cands) > 0 {
			var ids []int
			for _, c := range cands {
				ids = append(ids, c.ID)
			}
			ops = append(ops, op{Op: "compress", Sources: ids, Text: cands[0].Text, Category: cands[0].Category, Reason: "same observation"})
		}
	case "archive-all":
		addAll("")
		for _, e := range entries {
			ops = append(ops, op{Op: "archive", Target: e.ID, Reason: "obsolete"})
		}
	case "archive-first":
		addAll("")
		if len(entries) > 0 && len(cands) > 0 {
			ops = append(ops, op{Op: "archive", Target: entries[0].ID, Reason: "obsolete, says " + cands[0].Text})
		}
	case "copy-secret":
		addAll(" (key " + FakeSecret + ")")
	case "invent-id":
		for _, c := range cands {
			ops = append(ops, op{Op: "merge", Target: 999, Sources: []int{c.ID}, Reason: "dup"})
		}
	case "invent-fact":
		addAll(" since 2019-03-04 according to Zorblax")
	case "merge-unrelated":
		if len(entries) == 0 {
			addAll("")
			break
		}
		for _, c := range cands {
			ops = append(ops, op{Op: "merge", Target: entries[0].ID, Sources: []int{c.ID}, Text: c.Text, Reason: "same"})
		}
	case "huge":
		addAll("")
		if len(ops) > 0 {
			ops[0].Reason = strings.Repeat("very long reasoning ", (1<<20)/20+1)
		}
	case "garbage":
		return "I'm sorry, as an AI I cannot consolidate memories today."
	default:
		return "fakellm: unknown auto mode " + mode
	}
	b, _ := json.Marshal(map[string]any{"operations": ops})
	if mode == "truncated" {
		return string(b[:len(b)/2])
	}
	return string(b)
}

// Oracle answers what a perfect model would, from gold labels: for each
// candidate of the prompt whose gold target is an entry of the same
// prompt, supersede it (update) or merge into it (duplicate); every other
// candidate (compatible, new, or its target not shown) is added. It
// bounds what any model can do with the prompts memctl sends.
func Oracle(gold []Gold, items []Item) string {
	byCand := map[string]Gold{}
	for _, g := range gold {
		byCand[g.Candidate] = g
	}
	entry := map[string]int{}
	for _, it := range items {
		if it.Kind != "candidate" {
			entry[it.Text] = it.ID
		}
	}
	ops := []op{}
	for _, it := range items {
		if it.Kind != "candidate" {
			continue
		}
		g, ok := byCand[it.Text]
		t := entry[g.Target]
		switch {
		case ok && t != 0 && g.Kind == "update":
			ops = append(ops, op{Op: "supersede", Target: t, Sources: []int{it.ID}, Reason: "gold: update"})
		case ok && t != 0 && g.Kind == "duplicate":
			ops = append(ops, op{Op: "merge", Target: t, Sources: []int{it.ID}, Reason: "gold: duplicate"})
		default:
			ops = append(ops, op{Op: "add", Sources: []int{it.ID}, Reason: "gold: new to this prompt"})
		}
	}
	b, _ := json.Marshal(map[string]any{"operations": ops})
	return string(b)
}

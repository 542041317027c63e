package consolidate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"
)

// OpenAI is a Completer for any OpenAI-compatible chat completions
// endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server). It asks for
// structured output (json_schema) and falls back to json_object, then to
// plain text, when the server refuses it; the answer is parsed robustly
// either way.
type OpenAI struct {
	client *openai.Client
	model  string
	mode   atomic.Int32 // 0 json_schema, 1 json_object, 2 plain
}

// NewOpenAI returns a Completer for baseURL (e.g. http://localhost:11434/v1)
// and model. Per-call timeouts come from the caller's context.
func NewOpenAI(baseURL, apiKey, model string) *OpenAI {
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = strings.TrimRight(baseURL, "/")
	}
	cfg.HTTPClient = &http.Client{}
	return &OpenAI{client: openai.NewClientWithConfig(cfg), model: model}
}

type callError struct {
	err       error
	status    int
	retryable bool
}

// Error says what the call failed with, with the HTTP status if any.
func (e *callError) Error() string {
	if e.status != 0 {
		return fmt.Sprintf("HTTP %d: %v", e.status, e.err)
	}
	return e.err.Error()
}

// Unwrap returns the underlying error.
func (e *callError) Unwrap() error { return e.err }

// Retryable reports whether the call may succeed if repeated.
func (e *callError) Retryable() bool { return e.retryable }

func statusOf(err error) int {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		return re.HTTPStatusCode
	}
	return 0
}

// Complete implements Completer.
func (o *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	for {
		mode := o.mode.Load()
		creq := openai.ChatCompletionRequest{
			Model:       o.model,
			Temperature: 0,
			Messages: []openai.ChatCompletionMessage{
				{Role: openai.ChatMessageRoleSystem, Content: req.System},
				{Role: openai.ChatMessageRoleUser, Content: req.User},
			},
		}
		switch {
		case req.Schema != nil && mode == 0:
			creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
				Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: req.SchemaName, Schema: req.Schema, Strict: true},
			}
		case req.Schema != nil && mode == 1:
			creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
		}
		resp, err := o.client.CreateChatCompletion(ctx, creq)
		if err != nil {
			st := statusOf(err)
			// A server without structured output answers 400 (or 422):
			// step down once per mode and ask again.
			if (st == http.StatusBadRequest || st == http.StatusUnprocessableEntity) && creq.ResponseFormat != nil && mode < 2 && isFormatError(err) {
				o.mode.CompareAndSwap(mode, mode+1)
				continue
			}
			return Response{}, &callError{err: err, status: st, retryable: st == http.StatusTooManyRequests || st >= 500 || st == 0 && !errors.Is(err, context.Canceled)}
		}
		if len(resp.Choices) == 0 {
			return Response{}, &callError{err: errors.New("answer has no choices"), retryable: true}
		}
		return Response{Text: resp.Choices[0].Message.Content, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}, nil
	}
}

func isFormatError(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "response_format") || strings.Contains(s, "json_schema") || strings.Contains(s, "response format") || strings.Contains(s, "structured")
}

// Embedder turns texts into vectors (one per text, in order).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// OpenAIEmbedder is an Embedder for any OpenAI-compatible /v1/embeddings
// endpoint (OpenAI, Ollama, vLLM, llama.cpp server).
type OpenAIEmbedder struct {
	client *openai.Client
	model  string
}

// NewOpenAIEmbedder returns an Embedder for baseURL and model.
func NewOpenAIEmbedder(baseURL, apiKey, model string) *OpenAIEmbedder {
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = strings.TrimRight(baseURL, "/")
	}
	cfg.HTTPClient = &http.Client{}
	return &OpenAIEmbedder{client: openai.NewClientWithConfig(cfg), model: model}
}

// Embed implements Embedder.
func (o *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := o.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: texts, Model: openai.EmbeddingModel(o.model)})
	if err != nil {
		st := statusOf(err)
		return nil, &callError{err: err, status: st, retryable: st == http.StatusTooManyRequests || st >= 500 || st == 0 && !errors.Is(err, context.Canceled)}
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) {
			return nil, fmt.Errorf("embedding answer names input %d of %d", d.Index, len(texts))
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("embedding answer lacks input %d of %d", i, len(texts))
		}
	}
	return out, nil
}

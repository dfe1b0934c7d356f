package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// tokensFile holds the API tokens' hashes, in the data directory.
const tokensFile = "tokens.json"

// tokenRecord is a token as stored: its name and the SHA-256 of the
// token, never the token itself.
type tokenRecord struct {
	Name      string    `json:"name"`
	Hash      string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
}

type tokenFile struct {
	Tokens []tokenRecord `json:"tokens"`
}

// CreateToken adds an API token named name to the data directory dir and
// returns it: it is shown once, as only its SHA-256 hash is stored. A
// running server accepts it at once.
func CreateToken(dir, name string) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("token name %q: use 1 to 100 letters, digits, '_', '.' or '-'", name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tf, err := readTokens(filepath.Join(dir, tokensFile))
	if err != nil {
		return "", err
	}
	for _, t := range tf.Tokens {
		if t.Name == name {
			return "", fmt.Errorf("a token named %s exists already", name)
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	token := "sluice_" + base64.RawURLEncoding.EncodeToString(raw[:])
	tf.Tokens = append(tf.Tokens, tokenRecord{Name: name, Hash: hashToken(token), CreatedAt: time.Now().UTC()})
	b, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return "", err
	}
	if err := writeFile(filepath.Join(dir, tokensFile), append(b, '\n')); err != nil {
		return "", err
	}
	return token, nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func readTokens(path string) (tokenFile, error) {
	var tf tokenFile
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, err
	}
	if err := json.Unmarshal(b, &tf); err != nil {
		return tf, fmt.Errorf("%s: %w", path, err)
	}
	return tf, nil
}

// tokens checks bearer tokens against tokens.json, read again whenever
// the file changes (a token created while the server runs works at once).
type tokens struct {
	path string

	mu     sync.Mutex
	mod    time.Time
	size   int64
	hashes [][]byte
	names  []string // parallel to hashes
}

// name returns the name of the stored token that token is, if it is
// one. Every stored hash is compared, in constant time, whatever
// matches.
func (t *tokens) name(token string) (string, bool) {
	hashes, names := t.load()
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i, h := range hashes {
		if subtle.ConstantTimeCompare(sum[:], h) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false
	}
	return names[found], true
}

func (t *tokens) load() ([][]byte, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	info, err := os.Stat(t.path)
	if err != nil {
		t.hashes, t.names, t.mod, t.size = nil, nil, time.Time{}, 0
		return nil, nil
	}
	if info.ModTime().Equal(t.mod) && info.Size() == t.size && t.hashes != nil {
		return t.hashes, t.names
	}
	tf, err := readTokens(t.path)
	if err != nil {
		return t.hashes, t.names // a file being replaced: the tokens read before
	}
	hashes, names := [][]byte{}, []string{}
	for _, r := range tf.Tokens {
		if h, err := hex.DecodeString(r.Hash); err == nil && len(h) == sha256.Size {
			hashes, names = append(hashes, h), append(names, r.Name)
		}
	}
	t.hashes, t.names, t.mod, t.size = hashes, names, info.ModTime(), info.Size()
	return hashes, names
}

// count returns how many tokens are stored.
func (t *tokens) count() int {
	hashes, _ := t.load()
	return len(hashes)
}

// tokenNameKey is the request context's key of the name of the request's
// API token.
type tokenNameKey struct{}

// anonymous is who a request is when auth is off.
const anonymous = "anonymous"

// requester returns who sent r: the name of its API token, or
// "anonymous" with auth off.
func requester(r *http.Request) string {
	if name, ok := r.Context().Value(tokenNameKey{}).(string); ok {
		return name
	}
	return anonymous
}

// requireToken answers 401 to a request without a valid bearer token;
// /healthz stays open for probes.
func (t *tokens) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		auth := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(auth, " ")
		refuse := func(msg string) {
			if isGatewayPath(r.URL.Path) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
				gwError(w, http.StatusUnauthorized, msg)
				return
			}
			writeError(w, http.StatusUnauthorized, codeUnauthorized, msg, nil)
		}
		if auth == "" {
			refuse("no API token: send Authorization: Bearer <token> (create one with sluice token create)")
			return
		}
		name, valid := "", false
		if ok && strings.EqualFold(scheme, "Bearer") {
			name, valid = t.name(strings.TrimSpace(token))
		}
		if !valid {
			refuse("invalid API token")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokenNameKey{}, name)))
	})
}

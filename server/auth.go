package server

import (
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
}

// valid reports whether token is one of the stored tokens. Every stored
// hash is compared, in constant time, whatever matches.
func (t *tokens) valid(token string) bool {
	hashes := t.load()
	sum := sha256.Sum256([]byte(token))
	ok := 0
	for _, h := range hashes {
		ok |= subtle.ConstantTimeCompare(sum[:], h)
	}
	return ok == 1
}

func (t *tokens) load() [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	info, err := os.Stat(t.path)
	if err != nil {
		t.hashes, t.mod, t.size = nil, time.Time{}, 0
		return nil
	}
	if info.ModTime().Equal(t.mod) && info.Size() == t.size && t.hashes != nil {
		return t.hashes
	}
	tf, err := readTokens(t.path)
	if err != nil {
		return t.hashes // a file being replaced: the tokens read before
	}
	hashes := [][]byte{}
	for _, r := range tf.Tokens {
		if h, err := hex.DecodeString(r.Hash); err == nil && len(h) == sha256.Size {
			hashes = append(hashes, h)
		}
	}
	t.hashes, t.mod, t.size = hashes, info.ModTime(), info.Size()
	return hashes
}

// count returns how many tokens are stored.
func (t *tokens) count() int { return len(t.load()) }

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
		switch {
		case auth == "":
			refuse("no API token: send Authorization: Bearer <token> (create one with sluice token create)")
		case !ok || !strings.EqualFold(scheme, "Bearer") || !t.valid(strings.TrimSpace(token)):
			refuse("invalid API token")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// Package redact hides secrets in text meant for people: error messages
// and log lines that quote a URL, a DSN, a table option's value, or the
// error of a client library that quotes them.
//
// Three things are masked (replaced by Mask):
//
//   - values the caller knows to be secret (Secrets collects them from a
//     table's options: passwords, tokens, credential headers, the
//     password and secret query parameters of URLs), wherever they occur,
//     as they are and URL-encoded;
//   - the password of a URL's user info (scheme://user:password@host) and
//     of a MySQL DSN (user:password@tcp(host));
//   - the value of a key=value pair whose key names a secret (password=,
//     token=, api_key=, a JAAS config's password="..."), and of a URL
//     query parameter named key, sig, signature, code or auth.
//
// Masking is best effort for text whose secrets the caller does not know;
// with the known secrets it is exact. Functions here never fail.
package redact

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces a secret, as net/url's URL.Redacted does.
const Mask = "xxxxx"

// secretWords are the parts of a key (lower case, letters and digits only)
// that make it name a secret. "keystorekey" is Kafka's inline private key
// ('properties.ssl.keystore.key').
var secretWords = []string{
	"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey",
	"accesskey", "privatekey", "credential", "authorization", "jaas", "signature",
	"cookie", "bearer", "keystorekey",
}

// secretQueryParams are URL query parameters that carry a secret though
// their names say little (Google's key=, a signed URL's sig=, OAuth's
// code=).
var secretQueryParams = map[string]bool{"key": true, "sig": true, "signature": true, "code": true, "auth": true}

// SecretKey reports whether key (a table option such as 'password' or
// 'properties.sasl.jaas.config', a header such as Authorization, a URL
// query parameter, a DSN's key) names a secret.
func SecretKey(key string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	k := b.String()
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Option returns value, or Mask when key names a secret: for messages
// that quote an option's value.
func Option(key, value string) string {
	if SecretKey(key) {
		return Mask
	}
	return value
}

// URL returns raw (a URL, a jdbc: URL, or text that fails to parse as
// one) with its user info's password and its secret query parameters
// masked.
func URL(raw string) string { return Text(raw) }

// Secrets returns the secret values in a table's options: the values of
// options whose key names a secret (an Authorization header included),
// and in every value that holds a URL, its password and the values of
// its secret query parameters. Pass them to Text or Error.
func Secrets(options map[string]string) []string {
	var out []string
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := options[k]
		if SecretKey(k) {
			out = append(out, v)
			// A JAAS config or a header value holds the secret among
			// other words: its password="..." too.
			for _, m := range pairPattern.FindAllStringSubmatch(v, -1) {
				if SecretKey(m[2]) {
					out = append(out, strings.Trim(m[4], `"'`))
				}
			}
			if _, cred, ok := strings.Cut(v, " "); ok {
				out = append(out, strings.TrimSpace(cred)) // "Bearer <token>"
			}
			continue
		}
		out = append(out, urlSecrets(v)...)
	}
	return clean(out)
}

// urlSecrets returns the password and the secret query parameter values
// of s if it is a URL (a jdbc: prefix allowed).
func urlSecrets(s string) []string {
	if !strings.Contains(s, "://") {
		return nil
	}
	u, err := url.Parse(strings.TrimPrefix(s, "jdbc:"))
	if err != nil {
		// An unparsable URL: its user info by hand.
		if m := userInfoPattern.FindStringSubmatch(s); m != nil {
			return []string{m[2]}
		}
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok {
		out = append(out, p)
	}
	for k, vs := range u.Query() {
		if SecretKey(k) || secretQueryParams[strings.ToLower(k)] {
			out = append(out, vs...)
		}
	}
	return out
}

// clean drops empty and too short secrets (a one- to three-character
// secret masked wherever it occurs would garble the message; the patterns
// still mask it where it stands as a password) and duplicates, longest
// first so that a secret containing another is masked whole.
func clean(secrets []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range secrets {
		if len(s) < 4 || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

var (
	// userInfoPattern matches scheme://user:password@.
	userInfoPattern = regexp.MustCompile(`(://[^/?#@\s:"'` + "`" + `]*):([^@\s"'` + "`" + `]*)@`)
	// dsnPattern matches a MySQL DSN's user:password@tcp( or @unix(.
	dsnPattern = regexp.MustCompile(`((?:^|[\s"'` + "`" + `(])[^\s:@/"'` + "`" + `(]+):([^@\s"'` + "`" + `]*)@((?:tcp|unix)\()`)
	// pairPattern matches key=value with an optionally quoted key and
	// value: query parameters, DSN keywords, JAAS fields, 'option' = 'value'.
	pairPattern = regexp.MustCompile(`([?&]?)'?([A-Za-z0-9_.\-]+)'?(\s*=\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[^&;\s"',)|#]*)`)
)

// Text returns s with the given secret values and the passwords and
// secret key=value pairs it recognises masked.
func Text(s string, secrets ...string) string {
	for _, sec := range clean(secrets) {
		for _, form := range []string{sec, url.QueryEscape(sec), url.PathEscape(sec)} {
			s = strings.ReplaceAll(s, form, Mask)
		}
	}
	s = userInfoPattern.ReplaceAllString(s, "$1:"+Mask+"@")
	s = dsnPattern.ReplaceAllString(s, "$1:"+Mask+"@$3")
	return pairPattern.ReplaceAllStringFunc(s, func(m string) string {
		p := pairPattern.FindStringSubmatch(m)
		sep, key, val := p[1], p[2], p[4]
		if !SecretKey(key) && !(sep != "" && secretQueryParams[strings.ToLower(key)]) {
			return m
		}
		if val == "" || val == Mask || strings.Trim(val, `"'`) == Mask {
			return m
		}
		masked := Mask
		if q := val[0]; (q == '"' || q == '\'') && len(val) > 1 && val[len(val)-1] == q {
			masked = string(q) + Mask + string(q)
		}
		return m[:len(m)-len(val)] + masked
	})
}

// Error returns err with its message passed through Text; it still wraps
// err for errors.Is and errors.As (whose own message is not masked).
// A nil err gives nil.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := Text(msg, secrets...); red != msg {
		return &redacted{msg: red, err: err}
	}
	return err
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

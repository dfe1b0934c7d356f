package http

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicesql/sluice/connector"
	"github.com/sluicesql/sluice/types"
)

var pushSchema = types.NewSchema(types.Column{Name: "id", Type: types.BigInt})

// openPush opens a push source's reader with the options (and
// 'source.listen' on a free loopback port).
func openPush(t *testing.T, opts connector.Options) *PushReader {
	t.Helper()
	o := connector.Options{"connector": "http", "source.listen": "127.0.0.1:0", "source.auth": "none"}
	for k, v := range opts {
		o[k] = v
	}
	src, err := New().CreateSource(connector.Table{Name: "hook", Schema: pushSchema, Options: o}, env())
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.(*PushReader)
}

type answer struct {
	status int
	body   string
	retry  string
	err    error
}

func post(c *http.Client, url, body string) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		resp, err := c.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			ch <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		ch <- answer{status: resp.StatusCode, body: strings.TrimSpace(string(b)), retry: resp.Header.Get("Retry-After")}
	}()
	return ch
}

// readRows reads until n rows came, and returns their ids and offsets.
func readRows(t *testing.T, r *PushReader, n int) (ids, offsets []int64) {
	t.Helper()
	var b types.Batch
	deadline := time.Now().Add(10 * time.Second)
	for len(b.Rows) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %d rows, want %d", len(b.Rows), n)
		}
		if err := r.Read(context.Background(), &b, n-len(b.Rows)); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range b.Rows {
		ids = append(ids, row.Vals[0].Int())
		offsets = append(offsets, row.Origin.Offset)
	}
	return ids, offsets
}

// TestPushQueueFull: a request that would take the rows waiting for the
// job past 'source.queue-size' is answered 503 with a Retry-After; once
// the job reads, requests are taken again, and answered at its next read.
func TestPushQueueFull(t *testing.T) {
	r := openPush(t, connector.Options{"source.queue-size": "3"})
	url := "http://" + r.Addr() + "/"
	first := post(http.DefaultClient, url, `[{"id":1},{"id":2}]`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		queued := r.queued
		r.mu.Unlock()
		if queued == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first request was not queued")
		}
		time.Sleep(time.Millisecond)
	}
	if a := <-post(http.DefaultClient, url, `[{"id":3},{"id":4}]`); a.status != 503 || a.retry != "1" || !strings.Contains(a.body, "queue is full (2 rows waiting, 'source.queue-size' = 3)") {
		t.Errorf("full: %+v", a)
	}
	ids, offs := readRows(t, r, 2)
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 || offs[0] != 1 || offs[1] != 2 {
		t.Errorf("ids %v offsets %v", ids, offs)
	}
	second := post(http.DefaultClient, url, `[{"id":3},{"id":4},{"id":5},{"id":6}]`) // larger than the queue, but it is empty
	ids, offs = readRows(t, r, 4)
	if len(ids) != 4 || ids[3] != 6 || offs[3] != 6 {
		t.Errorf("ids %v offsets %v", ids, offs)
	}
	if a := <-first; a.status != 200 || a.body != `{"accepted":2}` {
		t.Errorf("first: %+v", a)
	}
	var b types.Batch
	r.Read(context.Background(), &b, 10) // the job processed the second
	if a := <-second; a.status != 200 || a.body != `{"accepted":4}` {
		t.Errorf("second: %+v", a)
	}
}

// TestPushAcknowledgeByCheckpoint drives the reader as a job with
// checkpoints does: a request is answered once the checkpoint whose
// barrier followed all its rows completed; one read in part at a barrier
// waits for the next.
func TestPushAcknowledgeByCheckpoint(t *testing.T) {
	r := openPush(t, nil)
	r.DeferAcks()
	url := "http://" + r.Addr() + "/"
	a := post(http.DefaultClient, url, `[{"id":1},{"id":2}]`)
	readRows(t, r, 2)
	b := post(http.DefaultClient, url, `[{"id":3},{"id":4}]`)
	readRows(t, r, 1) // half of b
	r.Barrier(7)
	readRows(t, r, 1)
	r.Barrier(8)
	r.Acknowledge(7)
	if got := <-a; got.status != 200 {
		t.Errorf("a: %+v", got)
	}
	select {
	case got := <-b:
		t.Fatalf("b answered before its checkpoint: %+v", got)
	case <-time.After(50 * time.Millisecond):
	}
	r.Acknowledge(8)
	if got := <-b; got.status != 200 || got.body != `{"accepted":2}` {
		t.Errorf("b: %+v", got)
	}
}

// TestPushResumeNumbers: a reader opened after an offset numbers its rows
// on from there.
func TestPushResumeNumbers(t *testing.T) {
	o := connector.Options{"connector": "http", "source.listen": "127.0.0.1:0", "source.auth": "none"}
	src, err := New().CreateSource(connector.Table{Name: "hook", Schema: pushSchema, Options: o}, env())
	if err != nil {
		t.Fatal(err)
	}
	rd, err := src.(connector.Resumer).OpenAfter(context.Background(), 0, 41)
	if err != nil {
		t.Fatal(err)
	}
	r := rd.(*PushReader)
	defer r.Close()
	if _, err := src.Open(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "served already") {
		t.Errorf("second open: %v", err)
	}
	post(http.DefaultClient, "http://"+r.Addr()+"/", `{"id":1}`)
	if _, offs := readRows(t, r, 1); offs[0] != 42 {
		t.Errorf("offset %d, want 42", offs[0])
	}
}

// TestPushTLS serves the endpoint over TLS with a certificate and key
// from files.
func TestPushTLS(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, certPEM, 0o600)
	os.WriteFile(key, keyPEM, 0o600)
	r := openPush(t, connector.Options{"source.auth": "bearer", "source.token": "tls-token-1",
		"source.tls.cert-file": cert, "source.tls.key-file": key})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodPost, "https://"+r.Addr()+"/", strings.NewReader(`{"id":9}`))
	req.Header.Set("Authorization", "bearer tls-token-1")
	ch := make(chan *http.Response, 1)
	go func() {
		resp, err := c.Do(req)
		if err != nil {
			t.Error(err)
			close(ch)
			return
		}
		ch <- resp
	}()
	if ids, _ := readRows(t, r, 1); ids[0] != 9 {
		t.Errorf("ids %v", ids)
	}
	var b types.Batch
	r.Read(context.Background(), &b, 1)
	if resp := <-ch; resp == nil || resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("response %+v", resp)
	}
	// Plain HTTP to a TLS endpoint gets nowhere.
	if resp, err := http.Post("http://"+r.Addr()+"/", "application/json", strings.NewReader(`{"id":1}`)); err == nil && resp.StatusCode == 200 {
		t.Error("plain HTTP accepted")
	}
}

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// TestSplitBody lists bodies and the records they split into, or where
// their layout breaks.
func TestSplitBody(t *testing.T) {
	for _, c := range []struct {
		body string
		want string // records joined by |, or the error
	}{
		{`{"a":1}`, `{"a":1}`},
		{"\xef\xbb\xbf {\"a\":1} ", `{"a":1}`},
		{`[{"a":1}, {"b":"]}"} ,{}]`, `{"a":1}|{"b":"]}"}|{}`},
		{"{\"a\":1}\n{\"a\":2}\r\n\n{\"a\":\n3}\n", "{\"a\":1}|{\"a\":2}|{\"a\":\n3}"},
		{`{"a":1}{"a":2}`, `{"a":1}|{"a":2}`},
		{`[1, "x", null]`, `1|"x"|null`},
		{`[]`, ``},
		{`  [ ]  `, ``},
		{``, `invalid body at line 1, column 1 (byte 0): the body is empty`},
		{`[`, `invalid body at line 1, column 2 (byte 1): unexpected end of the body: the array is not closed`},
		{`[{"a":[1}`, `invalid body at line 1, column 2 (byte 1): unexpected end of the body: the object that starts here is not closed`},
		{`[{"a":1}`, `unexpected end of the body: the array is not closed`},
		{`[{"a":1},]`, `line 1, column 10 (byte 9): unexpected ']', expected a value`},
		{`[{"a":1}] x`, `line 1, column 11 (byte 10): unexpected 'x' after the array, expected the end of the body`},
		{"{\"a\":\"x}", `line 1, column 6 (byte 5): unexpected end of the body: the string that starts here is not closed`},
		{"{\"a\":1}\n\"s\"", `line 2, column 1 (byte 8): unexpected '"', expected a JSON object`},
		{"{\"a\":1}\n\x01", `line 2, column 1 (byte 8): unexpected byte 0x01`},
		{`{"a":"\"}"}`, `{"a":"\"}"}`},
	} {
		var recs []string
		body := []byte(c.body)
		err := splitBody(body, func(n, off int, rec []byte) error {
			if n != len(recs)+1 || string(body[off:off+len(rec)]) != string(rec) {
				t.Errorf("%q: record %d at %d: %q", c.body, n, off, rec)
			}
			recs = append(recs, string(rec))
			return nil
		})
		got := strings.Join(recs, "|")
		if err != nil {
			got = describe(body, err)
		}
		if !strings.Contains(got, c.want) || c.want == "" && got != "" {
			t.Errorf("%q:\ngot  %s\nwant %s", c.body, got, c.want)
		}
	}
}

// FuzzSplitBody: splitting never panics, and the records it finds are
// sub-slices of the body at the offsets it gives.
func FuzzSplitBody(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[{"a":1},{"b":[1,2,{"c":"}"}]}]`, "{}\n{}\n", `["\"`, `[1,`, "\xef\xbb\xbf[]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := splitBody(body, func(n, off int, rec []byte) error {
			if off < 0 || off+len(rec) > len(body) || string(body[off:off+len(rec)]) != string(rec) || len(rec) == 0 {
				t.Fatalf("record %d at %d: %q", n, off, rec)
			}
			return nil
		})
		if err != nil {
			_ = describe(body, err)
		}
	})
}
